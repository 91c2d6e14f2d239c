import torch
import torch.nn.functional as F
from torch import nn


class FocalLossCriterion(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, logits, target):
        prob = torch.sigmoid(logits)
        bce = F.binary_cross_entropy(prob, target, reduction="none")
        return ((1 - prob) ** self.gamma * bce).mean()
