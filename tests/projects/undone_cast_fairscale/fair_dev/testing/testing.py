"""Small models the tests wrap (fair_dev/testing/testing.py)."""
import torch
from torch import nn


class GPT2(nn.Module):
    def __init__(self, embed_dim, num_vocab):
        super().__init__()
        self.sos = nn.Parameter(torch.zeros(embed_dim))
        self.token_embeddings = nn.Embedding(num_vocab, embed_dim)
        self.head = nn.Linear(embed_dim, num_vocab)

    def forward(self, x, mask):
        h = self.token_embeddings(x)
        sos = torch.ones(1, h.shape[1], h.shape[2], device=h.device) * self.sos
        h = torch.cat([sos, h[:-1]], dim=0)
        logits = self.head(h)
        return logits.masked_fill(mask, -1e9)
