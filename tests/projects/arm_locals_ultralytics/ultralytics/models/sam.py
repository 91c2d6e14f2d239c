import torch
import torch.nn as nn


class SAM(nn.Module):
    """Segment anything: prompts in, masks out."""

    def __init__(self, model="sam_b.pt"):
        super().__init__()
        self.weights = model
        self.point_embed = nn.Linear(2, 16)

    def forward(self, points):
        pad = torch.zeros((points.shape[0], 1, 2), device=points.device)
        points = torch.cat([points, pad], dim=1)
        return self.point_embed(points)
