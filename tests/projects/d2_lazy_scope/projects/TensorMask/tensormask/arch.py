import torch.nn.functional as F
from detectron2.modeling import META_ARCH_REGISTRY
from torch import nn


@META_ARCH_REGISTRY.register()
class TensorMask(nn.Module):
    """Another project of the tree, trained by its own fp32 config."""

    def __init__(self, dim=256, num_classes=80):
        super().__init__()
        self.cls_score = nn.Conv2d(dim, num_classes, 3, padding=1)

    def forward(self, features, pos_mask, labels):
        scores = self.cls_score(features)
        scores = scores.masked_fill(~pos_mask, -1e9)
        return {"loss_cls": F.cross_entropy(scores, labels)}
