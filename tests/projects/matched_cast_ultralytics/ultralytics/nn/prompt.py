import torch
import torch.nn as nn


class PromptEncoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.point_embed = nn.Linear(2, dim)

    def forward(self, points):
        pad = torch.zeros((points.shape[0], 1, 2), device=points.device)
        points = torch.cat([points, pad], dim=1)
        return self.point_embed(points)
