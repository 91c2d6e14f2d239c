import torch
from torch import nn

from detectron2.modeling import META_ARCH_REGISTRY

__all__ = ["TensorMask"]


@META_ARCH_REGISTRY.register()
class TensorMask(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.head = nn.Conv2d(3, 80, 3)

    def forward(self, batched_inputs):
        images = torch.stack([x["image"] for x in batched_inputs])
        logits = self.head(images)
        logits = logits.masked_fill(logits.isnan(), -1e9)
        return {"loss_cls": logits.mean()}
