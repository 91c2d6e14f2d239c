import torch
from torch import nn


class Transformer(nn.Module):
    def __init__(self, vocab=128, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.qk = nn.Linear(dim, dim * 2)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, mask):
        x = self.embed(tokens)
        q, k = self.qk(x).chunk(2, dim=-1)
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(~mask[:, None, :], -1e9)
        return self.out(scores.softmax(dim=-1) @ x)
