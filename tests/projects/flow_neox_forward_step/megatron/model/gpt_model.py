import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x, causal_mask):
        b, s, h = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, h // self.heads).unbind(2)
        scores = torch.einsum("bshd,bthd->bhst", q, k) / math.sqrt(h // self.heads)
        scores = scores.masked_fill(causal_mask, -1e10)
        probs = scores.float().softmax(-1).to(v.dtype)
        return self.out(torch.einsum("bhst,bthd->bshd", probs, v).reshape(b, s, h))


class GPTModel(nn.Module):
    def __init__(self, vocab, hidden, heads, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([CausalAttention(hidden, heads) for _ in range(layers)])
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, causal_mask):
        x = self.embed(tokens)
        for layer in self.layers:
            x = x + layer(x, causal_mask)
        return self.head(x)
