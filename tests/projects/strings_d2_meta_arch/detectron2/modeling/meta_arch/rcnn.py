import torch
import torch.nn.functional as F
from torch import nn

from .build import META_ARCH_REGISTRY

__all__ = ["GeneralizedRCNN"]


@META_ARCH_REGISTRY.register()
class GeneralizedRCNN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.backbone = nn.Conv2d(3, 16, 3)
        self.objectness = nn.Conv2d(16, 1, 1)

    def forward(self, batched_inputs):
        images = torch.stack([x["image"] for x in batched_inputs])
        features = self.backbone(images)
        scores = torch.sigmoid(self.objectness(features))
        targets = torch.stack([x["objectness"] for x in batched_inputs])
        return {"loss_rpn_cls": F.binary_cross_entropy(scores, targets)}
