from pathlib import Path

import torch

from litgpt.config import Config
from litgpt.model import GPT


@torch.inference_mode()
def next_token(model: GPT, tokens: torch.Tensor) -> torch.Tensor:
    logits = model(tokens[None, -model.config.block_size:])[0, -1]
    return torch.argmax(logits.float(), dim=-1, keepdim=True)


def main(model_name: str = "tiny-llama", checkpoint: Path = Path("checkpoints/lit_model.pth"), steps: int = 32) -> None:
    config = Config.from_name(model_name)
    model = GPT(config)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    model = model.to(device="cuda", dtype=torch.float16).eval()
    tokens = torch.tensor([1], device="cuda")
    for _ in range(steps):
        tokens = torch.cat([tokens, next_token(model, tokens)])
    print(tokens.tolist())


if __name__ == "__main__":
    main()
