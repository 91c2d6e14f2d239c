import torch
import torch.nn as nn


class VisionTransformer(nn.Module):
    def __init__(self, embed_dim=384, patch_size=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        return self.norm(x)


def vit_small(patch_size=16):
    return VisionTransformer(embed_dim=384, patch_size=patch_size)
