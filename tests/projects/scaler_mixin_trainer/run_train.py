import torch

from engine import Trainer


def main(model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    Trainer(model.cuda(), optimizer).train(loader, epochs=3)
