import torch
import torch.nn.functional as F
from torch import nn


class MultiLabelLoss(nn.Module):
    def __init__(self, pos_weight=1.0):
        super().__init__()
        self.pos_weight = pos_weight

    def forward(self, logits, target):
        probs = torch.sigmoid(logits)
        return F.binary_cross_entropy(probs, target)
