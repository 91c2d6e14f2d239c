import torch
import torch.nn.functional as F
from torch import nn

from vissl.losses import register_loss


@register_loss("multilabel_bce_loss")
class MultiLabelBCELoss(nn.Module):
    def __init__(self, pos_weight=1.0):
        super().__init__()
        self.pos_weight = pos_weight

    @classmethod
    def from_config(cls, loss_config):
        return cls(pos_weight=loss_config.get("pos_weight", 1.0))

    def forward(self, output, target):
        probs = torch.sigmoid(output)
        weight = 1.0 + (self.pos_weight - 1.0) * target
        return F.binary_cross_entropy(probs, target, weight=weight)
