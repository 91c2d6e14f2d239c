import torch.nn as nn

from ..dense_heads import AnchorHead
from ..necks import FPN


class SingleStageDetector(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.neck = FPN(in_channels, 256)
        self.bbox_head = AnchorHead(num_classes, 256)

    def extract_feat(self, img):
        return self.neck(img)

    def forward(self, img, labels=None, return_loss=True):
        x = self.extract_feat(img)
        cls_scores, bbox_preds = self.bbox_head(x)
        if return_loss:
            return self.bbox_head.loss(cls_scores, bbox_preds, labels)
        return cls_scores, bbox_preds

    def train_step(self, data, optimizer):
        losses = self(**data)
        return dict(loss=sum(losses.values()))
