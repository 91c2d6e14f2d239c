from mmcv.runner import BaseModule
from torch import nn
from torch.nn import functional as F

from ..builder import HEADS


@HEADS.register_module()
class StandardRoIHead(BaseModule):
    def __init__(self, dim=32, num_classes=4):
        super().__init__()
        self.qk = nn.Linear(dim, dim * 2)
        self.cls = nn.Linear(dim, num_classes)

    def forward_train(self, x, proposal_mask, gt_labels):
        q, k = self.qk(x).chunk(2, dim=-1)
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(~proposal_mask[:, None, :], -1e9)
        logits = self.cls(scores.softmax(dim=-1) @ x)
        return dict(loss_cls=F.cross_entropy(logits.flatten(0, 1), gt_labels.flatten()))
