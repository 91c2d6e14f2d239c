"""Laid out like a LightningCLI project (Lightning-AI/pytorch-lightning examples/pytorch/basics
and the "LightningCLI" docs): the model and its backbone are chosen in configs/mnist.yaml by
`class_path`, the precision by `trainer.precision`."""
from lightning.pytorch.cli import LightningCLI

from project.data import MNISTDataModule  # noqa: F401


def cli_main():
    LightningCLI(save_config_kwargs={"overwrite": True})


if __name__ == "__main__":
    cli_main()
