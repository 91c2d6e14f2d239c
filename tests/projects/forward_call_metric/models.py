import torch
from torch import nn


class Trunk(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(self.fc(x))


class MLPEmbedder(nn.Module):
    def __init__(self, dim=32, out=16):
        super().__init__()
        self.proj = nn.Linear(dim, out)

    def forward(self, x):
        return self.proj(x)


def l2_embedder(x):
    return torch.nn.functional.normalize(x.float(), dim=1)
