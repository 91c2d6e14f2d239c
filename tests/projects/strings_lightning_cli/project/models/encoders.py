import torch
from torch import nn


class MLPEncoder(nn.Module):
    """Attention-pooled pixel tokens."""

    def __init__(self, hidden_dim: int = 128):
        super().__init__()
        self.l1 = nn.Linear(1, hidden_dim)
        self.score = nn.Linear(hidden_dim, 1)

    def forward(self, x):
        tokens = x.flatten(2).transpose(1, 2)
        h = torch.relu(self.l1(tokens))
        scores = self.score(h).squeeze(-1)
        scores = scores.masked_fill(tokens.sum(-1) == 0, -1e9)
        weights = scores.softmax(dim=-1)
        return (weights.unsqueeze(-1) * h).sum(1)
