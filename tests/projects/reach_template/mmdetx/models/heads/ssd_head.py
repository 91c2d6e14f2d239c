from torch import nn

from ..builder import HEADS
from .base_dense_head import BaseDenseHead


@HEADS.register_module()
class SSDHead(BaseDenseHead):
    def __init__(self, dim=32, num_classes=4):
        super().__init__()
        self.cls_proj = nn.Linear(dim, num_classes)
        self.query = nn.Linear(dim, dim)

    def forward(self, x):
        return self.cls_proj(x)

    def loss_by_feat(self, feats, gt_labels, pos_mask):
        scores = self.query(feats) @ feats.transpose(-2, -1)
        scores = scores.masked_fill(~pos_mask[:, None, :], -1e9)
        return dict(loss_cls=(self.cls_proj(scores.softmax(dim=-1) @ feats) - gt_labels).abs().mean())
