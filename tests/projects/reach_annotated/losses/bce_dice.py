import torch
import torch.nn.functional as F
from torch import nn


class BCEDice(nn.Module):
    def __init__(self, smooth=1.0):
        super().__init__()
        self.smooth = smooth

    def forward(self, logits, target):
        prob = torch.sigmoid(logits)
        bce = F.binary_cross_entropy(prob, target)
        inter = (prob * target).sum()
        dice = 1 - (2 * inter + self.smooth) / (prob.sum() + target.sum() + self.smooth)
        return bce + dice
