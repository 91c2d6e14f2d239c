import torch
from torch import nn

from vit_pytorch.attention import Attention


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, hidden_dim), nn.GELU(), nn.Linear(hidden_dim, dim))

    def forward(self, x):
        return self.net(x)


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, mlp_dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                Attention(dim, heads=heads, dim_head=dim_head),
                FeedForward(dim, mlp_dim),
            ]))

    def forward(self, x, mask):
        for attn, ff in self.layers:
            x = attn(x, mask) + x
            x = ff(x) + x
        return self.norm(x)


class ViT(nn.Module):
    """Patches of variable-size images, padded to one length: `mask` marks the real patches."""

    def __init__(self, *, patch_dim, num_classes, dim, depth, heads, mlp_dim, dim_head=64):
        super().__init__()
        self.to_patch_embedding = nn.Sequential(nn.LayerNorm(patch_dim), nn.Linear(patch_dim, dim), nn.LayerNorm(dim))
        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim)
        self.mlp_head = nn.Linear(dim, num_classes)

    def forward(self, patches, mask):
        x = self.to_patch_embedding(patches)
        x = self.transformer(x, mask)
        x = (x * mask[..., None]).sum(dim=1) / mask.sum(dim=1, keepdim=True)
        return self.mlp_head(x)
