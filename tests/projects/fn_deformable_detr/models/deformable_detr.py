import torch
from torch import nn

from .ops.modules import MSDeformAttn


class DeformableTransformerEncoderLayer(nn.Module):
    def __init__(self, d_model=256, n_levels=4, n_heads=8, n_points=4):
        super().__init__()
        self.self_attn = MSDeformAttn(d_model, n_levels, n_heads, n_points)
        self.norm1 = nn.LayerNorm(d_model)

    def forward(self, src, pos, reference_points, spatial_shapes, level_start_index):
        src2 = self.self_attn(src + pos, reference_points, src, spatial_shapes, level_start_index)
        return self.norm1(src + src2)


class DeformableDETR(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.encoder = DeformableTransformerEncoderLayer()
        self.class_embed = nn.Linear(256, num_classes)

    def forward(self, src, pos, reference_points, spatial_shapes, level_start_index):
        memory = self.encoder(src, pos, reference_points, spatial_shapes, level_start_index)
        return self.class_embed(memory)


def build(args):
    return DeformableDETR(args.num_classes)
