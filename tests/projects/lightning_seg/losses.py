import torch.nn.functional as F
from torch import nn


class BCEDiceLoss(nn.Module):
    """BCE on probabilities plus soft dice."""

    def __init__(self, smooth=1.0):
        super().__init__()
        self.smooth = smooth

    def forward(self, probs, target):
        bce = F.binary_cross_entropy(probs, target)
        inter = (probs * target).sum()
        dice = 1 - (2 * inter + self.smooth) / (probs.sum() + target.sum() + self.smooth)
        return bce + dice
