import math

import torch
import torch.nn.functional as F
from torch import nn


class AugmentPipe(nn.Module):
    """Random scale and translation of the images, drawn per sample, applied with grid_sample."""

    def __init__(self, scale_std=0.2, xflip=0.5):
        super().__init__()
        self.scale_std = scale_std
        self.xflip = xflip
        self.out = nn.Conv2d(3, 3, 1)

    def forward(self, images):
        batch, _, height, width = images.shape
        low = math.log(0.5)
        high = -low
        scale = torch.exp(torch.rand(batch, 1, 1, device=images.device) * (high - low) + low)
        flip = torch.rand(batch, 1, 1, device=images.device) < self.xflip
        sign = torch.ones(batch, 1, 1, device=images.device) - 2 * flip.float()
        scale_xy = torch.stack([scale * sign, scale], dim=-1).clamp_(0.25, 4)
        shift = torch.randn(batch, 1, 1, 2, device=images.device) * 0.125
        ys = torch.linspace(-1, 1, steps=height, device=images.device)[None, :, None].expand(batch, -1, width)
        xs = torch.linspace(-1, 1, steps=width, device=images.device)[None, None].expand(batch, height, -1)
        grid = torch.stack([xs, ys], dim=-1) * scale_xy + shift
        grid.mul_(0.5).add_(0.5)
        grid.mul_(2).sub_(1)
        images = F.grid_sample(images.float(), grid=grid, mode="bilinear", padding_mode="reflection",
                               align_corners=False).to(images.dtype)
        return self.out(images)
