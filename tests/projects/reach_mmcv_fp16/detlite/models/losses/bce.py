import torch
import torch.nn.functional as F
from torch import nn

from ..builder import LOSSES


@LOSSES.register_module()
class SigmoidBCELoss(nn.Module):
    def forward(self, scores, labels):
        prob = torch.sigmoid(scores)
        return F.binary_cross_entropy(prob, labels)
