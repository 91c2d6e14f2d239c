"""Losses for the segmentation model."""
import torch
import torch.nn.functional as F
from torch import nn


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, logits, target):
        probs = torch.sigmoid(logits)
        bce = F.binary_cross_entropy(probs, target, reduction="none")
        p_t = probs * target + (1 - probs) * (1 - target)
        return (bce * (1 - p_t) ** self.gamma).mean()


def dice_loss(logits, target, eps=1.0):
    probs = logits.sigmoid()
    inter = (probs * target).sum()
    return 1 - (2 * inter + eps) / (probs.sum() + target.sum() + eps)
