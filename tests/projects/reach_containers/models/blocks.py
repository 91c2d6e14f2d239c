import torch
from torch import nn


class Embed(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qk = nn.Linear(dim, dim * 2)

    def forward(self, x, mask):
        q, k = self.qk(x).chunk(2, dim=-1)
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(~mask[:, None, :], -1e9)
        return x + scores.softmax(dim=-1) @ x


class SegHead(nn.Module):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.cls = nn.Linear(dim, num_classes)

    def forward(self, x, mask):
        out = torch.zeros(x.shape[0], x.shape[1], self.cls.out_features, device=x.device)
        out[mask] = self.cls(x)[mask]
        return out
