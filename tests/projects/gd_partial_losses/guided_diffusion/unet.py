import torch.nn as nn

from .nn import MaskedCrossAttention


class UNetModel(nn.Module):
    def __init__(self, model_channels, context_dim):
        super().__init__()
        self.inp = nn.Linear(3, model_channels)
        self.cross = MaskedCrossAttention(model_channels, context_dim)
        self.out = nn.Linear(model_channels, 3)

    def forward(self, x, timesteps, context=None, context_mask=None):
        h = self.inp(x)
        h = h + self.cross(h, context, context_mask)
        return self.out(h)
