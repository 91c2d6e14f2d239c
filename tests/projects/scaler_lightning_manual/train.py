"""The training script: a Trainer with float16 mixed precision."""
import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

from model import SimpleModel


def main():
    data = TensorDataset(torch.randn(256, 32), torch.randint(0, 2, (256,)))
    trainer = pl.Trainer(max_epochs=2, precision="16-mixed", accelerator="gpu", devices=1)
    trainer.fit(SimpleModel(), DataLoader(data, batch_size=32))


if __name__ == "__main__":
    main()
