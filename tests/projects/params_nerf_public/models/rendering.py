import torch
import torch.nn as nn
import torch.nn.functional as F

from models.nerf import Embedding


def alpha_compositing(alphas, z_vals, eps: float = 1e-10):
    log_transmittance = torch.log(1.0 - alphas + eps)
    transmittance = torch.exp(torch.cumsum(log_transmittance, -1) - log_transmittance)
    weights = alphas * transmittance
    return weights, torch.sum(weights * z_vals, -1)


class NeRFRenderer(nn.Module):
    def __init__(self, W=64):
        super().__init__()
        self.embedding = Embedding()
        self.xyz_encoding = nn.Linear(39, W)
        self.sigma = nn.Linear(W, 1)
        self.rgb = nn.Linear(W, 3)

    def forward(self, pts, z_vals):
        with torch.autocast("cpu", dtype=torch.float16):
            h = F.relu(self.xyz_encoding(self.embedding(pts)))
            alphas = torch.sigmoid(self.sigma(h))[..., 0]
            weights, depth = alpha_compositing(alphas, z_vals)
            rgb = torch.sum(weights[..., None] * torch.sigmoid(self.rgb(h)), -2)
        return rgb.float(), depth.float()
