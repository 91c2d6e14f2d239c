import torch
import torch.nn.functional as F
from detectron2.modeling import META_ARCH_REGISTRY
from torch import nn


@META_ARCH_REGISTRY.register()
class MaskRCNNX(nn.Module):
    def __init__(self, num_classes=80, dim=256):
        super().__init__()
        self.mask_head = nn.Conv2d(dim, num_classes, 1)

    def forward(self, features, gt_masks):
        mask_logits = self.mask_head(features)
        mask_prob = torch.sigmoid(mask_logits)
        return {"loss_mask": F.binary_cross_entropy(mask_prob, gt_masks)}
