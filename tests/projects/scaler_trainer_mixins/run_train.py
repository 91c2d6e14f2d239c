"""Entry point (transformers examples' run_*.py shape)."""
import types

import torch

from trainer import Trainer


def main():
    model = torch.nn.Linear(8, 2).cuda()
    args = types.SimpleNamespace(fp16=True, max_grad_norm=1.0)
    trainer = Trainer(model, args, torch.optim.AdamW(model.parameters()))
    trainer.train([])


if __name__ == "__main__":
    main()
