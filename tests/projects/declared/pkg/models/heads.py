import torch
import torch.nn.functional as F
from torch import nn


class ObjectnessHead(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, 1, 1)

    def forward(self, feats, targets=None):
        scores = torch.sigmoid(self.conv(feats))
        if targets is None:
            return scores
        return F.binary_cross_entropy(scores, targets)
