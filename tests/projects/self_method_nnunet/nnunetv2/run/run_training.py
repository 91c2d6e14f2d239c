import torch

from nnunetv2.training.nnUNetTrainer.nnUNetTrainer import nnUNetTrainer


def run_training(plans):
    trainer = nnUNetTrainer(plans)
    trainer.run_training(torch.load("dataloader.pt"))


if __name__ == "__main__":
    run_training({"num_regions": 3})
