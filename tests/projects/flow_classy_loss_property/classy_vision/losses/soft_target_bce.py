import torch
import torch.nn.functional as F
from torch import nn


class SoftTargetBinaryCrossEntropyLoss(nn.Module):
    def __init__(self, reduction="mean", normalize_targets=True):
        super().__init__()
        self.reduction = reduction
        self.normalize_targets = normalize_targets

    def forward(self, output, target):
        if self.normalize_targets:
            target = target / target.sum(dim=1, keepdim=True).clamp(min=1e-6)
        probs = torch.sigmoid(output)
        return F.binary_cross_entropy(probs, target, reduction=self.reduction)
