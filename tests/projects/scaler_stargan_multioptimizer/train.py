"""Entry point: builds the networks, their optimizers and the trainer (written for amplint's tests)."""

import torch

from optimizers import build_optimizer
from trainer import Trainer


def main(loader, epochs=100):
    model = {"generator": torch.nn.Linear(80, 80), "discriminator": torch.nn.Linear(80, 1)}
    optimizer = build_optimizer({key: model[key].parameters() for key in model})
    trainer = Trainer(model, optimizer)
    for epoch in range(epochs):
        trainer._train_epoch(loader)
