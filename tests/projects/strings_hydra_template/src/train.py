"""Laid out like ashleve/lightning-hydra-template (src/train.py, configs/model/mnist.yaml), with
the training step written out under torch.autocast instead of a Lightning Trainer."""
import hydra
import torch
from omegaconf import DictConfig


def train(cfg: DictConfig, loader):
    model = hydra.utils.instantiate(cfg.model)
    optimizer = torch.optim.Adam(model.parameters())
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


@hydra.main(version_base="1.3", config_path="../configs", config_name="train.yaml")
def main(cfg: DictConfig) -> None:
    train(cfg, None)


if __name__ == "__main__":
    main()
