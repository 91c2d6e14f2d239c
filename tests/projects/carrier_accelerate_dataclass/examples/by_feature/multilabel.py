import argparse

import torch
from accelerate import Accelerator

from textcls.config import TrainingConfig


def training_function(cfg: TrainingConfig, loader):
    accelerator = Accelerator(mixed_precision=cfg.mixed_precision)
    model = cfg.model_cls(hidden_size=768)
    optimizer = torch.optim.AdamW(params=model.parameters(), lr=cfg.lr)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(cfg.num_epochs):
        model.train()
        for batch in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                logits, aux = model(batch["features"], batch["labels"])
                loss = cfg.criterion(logits, batch["labels"]) + aux
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mixed_precision", default="fp16")
    args = parser.parse_args()
    training_function(TrainingConfig(mixed_precision=args.mixed_precision), loader=[])


if __name__ == "__main__":
    main()
