import torch.nn as nn

from ..dense_heads import AnchorHead


class SingleStageDetector(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.backbone = nn.Conv2d(3, in_channels, 3, padding=1)
        self.bbox_head = AnchorHead(num_classes, in_channels)

    def extract_feat(self, img):
        return [self.backbone(img)]

    def forward_train(self, img, gt_labels):
        x = self.extract_feat(img)
        cls_scores, bbox_preds = self.bbox_head(x)
        return self.bbox_head.loss(cls_scores, bbox_preds, gt_labels)
