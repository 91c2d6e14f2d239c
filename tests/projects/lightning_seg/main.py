import lightning as L

from data import SegDataModule
from model import LitSegmenter


def main():
    dm = SegDataModule(batch_size=16)
    model = LitSegmenter()
    trainer = L.Trainer(max_epochs=20, accelerator="gpu", devices=1, precision="16-mixed")
    trainer.fit(model, datamodule=dm)


if __name__ == "__main__":
    main()
