"""Linear probe on the attention values of the first block, at the last position."""
import torch
from torch.nn import functional as F

from model import GPT, GPTConfig


def main(device_type="cpu"):
    torch.manual_seed(1337)
    config = GPTConfig()
    model = GPT(config)
    c_attn = torch.nn.Linear(config.n_embd, 3 * config.n_embd)
    c_attn.load_state_dict(model.h[0].c_attn.state_dict())
    head = torch.nn.Linear(config.n_embd, 2)
    idx = torch.randint(config.vocab_size, (4, config.block_size))
    x = model.wte(idx)
    with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
        q, k, v = c_attn(x).split(config.n_embd, dim=2)
    return F.linear(v[:, -1], head.weight, head.bias)


if __name__ == "__main__":
    print(main().shape)
