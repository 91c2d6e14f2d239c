import torch
from torch import nn


class TinyUnet(nn.Module):
    def __init__(self, channels=3, dim=32, self_cond=True):
        super().__init__()
        self.self_cond = self_cond
        in_channels = channels * (2 if self_cond else 1)
        self.down = nn.Conv2d(in_channels, dim, 3, padding=1)
        self.time = nn.Linear(1, dim)
        self.up = nn.Conv2d(dim, channels, 3, padding=1)

    def forward(self, x, noise_level, self_cond=None):
        if self.self_cond:
            x = torch.cat((x, torch.zeros_like(x) if self_cond is None else self_cond), dim=1)
        h = self.down(x) + self.time(noise_level[:, None])[:, :, None, None]
        return self.up(torch.relu(h))
