import torch
from torch import nn


def soft_bce(probs, target, smoothing=0.1):
    target = target * (1 - smoothing) + 0.5 * smoothing
    return nn.functional.binary_cross_entropy(probs, target)


class SoftBCE(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, probs, target):
        return soft_bce(probs, target, self.smoothing)
