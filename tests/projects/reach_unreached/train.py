import torch

from engine.trainer import train_one_epoch
from models import Net


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x, mask) for x, mask, _ in loader]


def main(loader, probe):
    model = Net().cuda()
    evaluate(model, loader)
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
    train_one_epoch(probe, loader, optimizer, torch.amp.GradScaler("cuda"), torch.nn.BCEWithLogitsLoss())
