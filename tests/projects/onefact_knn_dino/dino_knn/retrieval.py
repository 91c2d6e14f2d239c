"""Nearest-neighbour voting over a feature bank, run under CPU autocast."""
import torch
import torch.nn as nn


class Projector(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)


class KNNVoter(nn.Module):
    def __init__(self, dim, bank):
        super().__init__()
        self.head = Projector(dim)
        self.register_buffer("bank", bank)

    def scores(self, query, keep):
        with torch.autocast("cpu"):
            sim = torch.mv(self.bank, query)
            votes = torch.zeros(self.bank.shape[0])
            votes[keep] = sim[keep]
            return votes

    def embed(self, feats, keep):
        with torch.autocast("cpu"):
            emb = self.head(feats)
            emb = emb.float()
            out = torch.zeros(feats.shape[0], feats.shape[1])
            out[keep] = emb[keep]
            return out
