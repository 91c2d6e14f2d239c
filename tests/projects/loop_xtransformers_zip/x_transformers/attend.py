import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, heads=8, dim_head=64, causal=False):
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.scale = dim_head ** -0.5
        self.to_q = nn.Linear(dim, heads * dim_head, bias=False)
        self.to_kv = nn.Linear(dim, heads * dim_head * 2, bias=False)
        self.to_out = nn.Linear(heads * dim_head, dim, bias=False)

    def forward(self, x, mask=None):
        b, n, _ = x.shape
        q = self.to_q(x).reshape(b, n, self.heads, -1).transpose(1, 2)
        k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in self.to_kv(x).chunk(2, dim=-1))
        sim = torch.einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        if mask is not None:
            sim = sim.masked_fill(~mask[:, None, None, :], -1e9)
        if self.causal:
            causal_mask = torch.ones(n, n, device=x.device, dtype=torch.bool).triu(1)
            sim = sim.masked_fill(causal_mask, -torch.finfo(sim.dtype).max)
        attn = F.softmax(sim, dim=-1)
        out = torch.einsum("b h i j, b h j d -> b h i d", attn, v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, -1))
