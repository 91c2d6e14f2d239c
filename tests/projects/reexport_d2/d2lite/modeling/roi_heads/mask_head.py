import torch
import torch.nn.functional as F
from torch import nn


def mask_rcnn_loss(pred_mask_logits, gt_masks):
    mask_probs = pred_mask_logits.sigmoid()
    return F.binary_cross_entropy(mask_probs, gt_masks, reduction="mean")


class MaskRCNNHead(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.predictor = nn.Conv2d(channels, 1, 1)

    def forward(self, features):
        return torch.relu(self.predictor(features))
