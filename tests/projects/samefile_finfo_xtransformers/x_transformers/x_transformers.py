import torch
import torch.nn.functional as F
from torch import einsum, nn


def exists(val):
    return val is not None


def max_neg_value(tensor):
    return -torch.finfo(tensor.dtype).max


class Attention(nn.Module):
    def __init__(self, dim, heads=8, dim_head=64):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner = heads * dim_head
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_k = nn.Linear(dim, inner, bias=False)
        self.to_v = nn.Linear(dim, inner, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x, mask=None):
        q, k, v = self.to_q(x) * self.scale, self.to_k(x), self.to_v(x)
        dots = einsum("b i d, b j d -> b i j", q, k)
        if exists(mask):
            dots = dots.masked_fill(~mask, max_neg_value(x))
        attn = dots.softmax(dim=-1)
        return self.to_out(einsum("b i j, b j d -> b i d", attn, v))


class TransformerWrapper(nn.Module):
    def __init__(self, num_tokens, dim, depth):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.norm = nn.LayerNorm(dim)
        self.attn = Attention(dim)
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, x, mask=None):
        h = self.norm(self.token_emb(x))
        h = h + self.attn(h, mask=mask)
        return self.to_logits(h)
