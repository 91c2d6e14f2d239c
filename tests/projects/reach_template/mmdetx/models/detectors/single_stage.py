from torch import nn

from ..builder import DETECTORS, build_head
from .base import BaseDetector


@DETECTORS.register_module()
class SingleStageDetector(BaseDetector):
    def __init__(self, bbox_head, in_channels=3, dim=32, init_cfg=None):
        super().__init__(init_cfg)
        self.backbone = nn.Conv2d(in_channels, dim, 3, padding=1)
        self.bbox_head = build_head(bbox_head)

    def extract_feat(self, img):
        return self.backbone(img).flatten(2).transpose(1, 2)

    def forward_train(self, img, img_metas, gt_labels=None, pos_mask=None):
        x = self.extract_feat(img)
        return self.bbox_head.loss(x, gt_labels, pos_mask)
