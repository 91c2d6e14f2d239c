import torch

from engine.trainer import Trainer
from losses import BCEDice
from models import Net


def main(loader):
    net = Net()
    trainer = Trainer(net, torch.optim.AdamW(net.parameters()), criterion=BCEDice())
    trainer.fit(loader, epochs=10)
