import torch
from mmcv.runner import BaseModule, force_fp32
from torch import nn

from ..builder import HEADS, build_loss


@HEADS.register_module()
class AttnHead(BaseModule):
    def __init__(self, dim, num_classes, loss_cls):
        super().__init__()
        self.qk = nn.Linear(dim, dim * 2)
        self.cls = nn.Linear(dim, num_classes)
        self.loss_cls = build_loss(loss_cls)

    def forward(self, x, mask):
        q, k = self.qk(x).chunk(2, dim=-1)
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(~mask[:, None, :], -1e9)
        return self.cls(scores.softmax(dim=-1) @ x)

    @force_fp32(apply_to=("scores",))
    def loss(self, scores, labels):
        return dict(loss_cls=self.loss_cls(scores, labels))
