import torch
from torch import nn


class VisionTransformer(nn.Module):
    def __init__(self, patch_dim=48, embed_dim=64, depth=2):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, embed_dim)
        self.blocks = nn.ModuleList([nn.Linear(embed_dim, embed_dim) for _ in range(depth)])
        self.head = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        x = self.patch_embed(x)
        for blk in self.blocks:
            x = x + torch.relu(blk(x))
        return self.head(x[:, 0])
