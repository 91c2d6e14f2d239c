import torch
from torch import nn


class PatchEmbedNet(nn.Module):
    def __init__(self, in_chans=3, embed_dim=64, patch_size=4):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        return self.norm(x).mean(dim=1)
