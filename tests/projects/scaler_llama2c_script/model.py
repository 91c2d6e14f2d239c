"""A small decoder-only language model."""
import torch
from torch import nn


class Transformer(nn.Module):
    def __init__(self, dim, n_layers):
        super().__init__()
        self.embed = nn.Embedding(32, dim)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_layers))
        self.out = nn.Linear(dim, 32)

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = torch.relu(layer(h))
        return self.out(h)
