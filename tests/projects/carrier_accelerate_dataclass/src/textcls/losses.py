import torch
from torch import nn


class SoftBCE(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, labels):
        labels = labels * (1 - self.smoothing) + 0.5 * self.smoothing
        return nn.functional.binary_cross_entropy(torch.sigmoid(logits), labels)
