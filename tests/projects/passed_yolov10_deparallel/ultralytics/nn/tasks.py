import torch
import torch.nn as nn


class DetectionModel(nn.Module):
    def __init__(self, ch=3, nc=80):
        super().__init__()
        self.stem = nn.Conv2d(ch, 64, 3, 2, 1)
        self.head = nn.Conv2d(64, nc, 1)

    def forward(self, x):
        x = self.stem(x)
        u = x.mean(1, keepdim=True)
        var = (x - u).pow(2).mean(1, keepdim=True)
        return self.head((x - u) / torch.sqrt(var + 1e-5))
