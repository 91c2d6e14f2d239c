import torch
from torch import nn


class UNet(nn.Module):
    def __init__(self, channels=3, classes=1):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(channels, 32, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        return self.head(self.encoder(x))
