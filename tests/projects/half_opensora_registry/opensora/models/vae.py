import torch
from torch import nn

from opensora.registry import MODELS


@MODELS.register_module("autoencoder_2d")
class AutoEncoder(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv = nn.Conv2d(3, ch, 3)

    def forward(self, x):
        z = self.conv(x)
        noise = torch.randn(z.shape, device=z.device)
        return z + noise
