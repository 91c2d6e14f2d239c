import json
from pathlib import Path

import torch

from .model import ModelArgs, Transformer


class Llama:
    @staticmethod
    def build(ckpt_dir, tokenizer_path, max_seq_len, max_batch_size):
        checkpoint = torch.load(sorted(Path(ckpt_dir).glob("*.pth"))[0], map_location="cpu")
        params = json.loads((Path(ckpt_dir) / "params.json").read_text())
        args = ModelArgs(max_seq_len=max_seq_len, max_batch_size=max_batch_size, **params)
        model = Transformer(args)
        model.load_state_dict(checkpoint, strict=False)
        model = model.half().cuda()
        return Llama(model)

    def __init__(self, model):
        self.model = model

    @torch.inference_mode()
    def chat(self, dialogs, max_gen_len):
        tokens = torch.zeros((len(dialogs), max_gen_len or 16), dtype=torch.long, device="cuda")
        logits = self.model.forward(tokens, 0)
        return logits.argmax(-1).tolist()
