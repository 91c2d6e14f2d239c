import torch
from torch import nn

from ..builder import HEADS
from .base_dense_head import BaseDenseHead


@HEADS.register_module()
class RetinaHead(BaseDenseHead):
    def __init__(self, dim=32, num_classes=4):
        super().__init__()
        self.cls_proj = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.cls_proj(x)

    def loss_by_feat(self, feats, gt_labels, pos_mask):
        cls_scores = torch.zeros(feats.shape[0], feats.shape[1], self.cls_proj.out_features, device=feats.device)
        cls_scores[pos_mask] = self.cls_proj(feats)[pos_mask]
        return dict(loss_cls=(cls_scores - gt_labels).abs().mean())
