import torch.nn as nn

from dinov2.utils.features import FeatureExtractMixin


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class DinoVisionTransformer(FeatureExtractMixin, nn.Module):
    def __init__(self, in_dim=48, embed_dim=384, depth=2):
        super().__init__()
        self.embed_dim = embed_dim
        self.patch_embed = nn.Linear(in_dim, embed_dim)
        self.blocks = nn.ModuleList([Block(embed_dim) for _ in range(depth)])

    def forward(self, x):
        x = self.patch_embed(x)
        for blk in self.blocks:
            x = blk(x)
        return x


def vit_small(**kwargs):
    return DinoVisionTransformer(embed_dim=384, **kwargs)
