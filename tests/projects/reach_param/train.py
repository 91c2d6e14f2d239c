import torch

from engine.trainer import train_one_epoch
from losses import BCEDice
from models import Net


def main(loader, epochs=10):
    model = Net().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.amp.GradScaler("cuda")
    criterion = BCEDice()
    for _ in range(epochs):
        train_one_epoch(model, loader, optimizer, scaler, criterion)
