import torch
import torch.nn as nn

from ultralytics.nn.modules.transformer import LayerNorm2d


class PromptEncoder(nn.Module):
    def __init__(self, embed_dim=256, mask_in_chans=16):
        super().__init__()
        self.embed_dim = embed_dim
        self.mask_downscaling = nn.Sequential(
            nn.Conv2d(1, mask_in_chans, kernel_size=2, stride=2),
            LayerNorm2d(mask_in_chans),
            nn.Conv2d(mask_in_chans, embed_dim, kernel_size=1),
        )
        self.point_embed = nn.Linear(2, embed_dim)

    def forward(self, points, masks):
        padding_point = torch.zeros((points.shape[0], 1, 2), device=points.device)
        points = torch.cat([points, padding_point], dim=1)
        return self.point_embed(points), self.mask_downscaling(masks)
