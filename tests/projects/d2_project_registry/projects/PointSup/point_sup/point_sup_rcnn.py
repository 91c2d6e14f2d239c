import torch
import torch.nn as nn

from detectron2.modeling import META_ARCH_REGISTRY


@META_ARCH_REGISTRY.register()
class PointSupRCNN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.backbone = nn.Conv2d(3, 256, 3, padding=1)
        self.query = nn.Linear(256, 256)

    def forward(self, batched_inputs):
        images = torch.stack([x["image"] for x in batched_inputs])
        valid = torch.stack([x["valid"] for x in batched_inputs])
        feats = self.backbone(images).flatten(2).transpose(1, 2)
        scores = self.query(feats) @ feats.transpose(1, 2)
        scores = scores.masked_fill(~valid, -1e9)
        return {"loss_point": (scores.softmax(-1) @ feats).pow(2).mean()}
