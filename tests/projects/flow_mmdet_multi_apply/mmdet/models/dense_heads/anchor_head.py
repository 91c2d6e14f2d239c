import torch
import torch.nn as nn
import torch.nn.functional as F

from mmdet.core import multi_apply


class AnchorHead(nn.Module):
    def __init__(self, num_classes, in_channels):
        super().__init__()
        self.conv_cls = nn.Conv2d(in_channels, num_classes, 1)
        self.conv_reg = nn.Conv2d(in_channels, 4, 1)

    def forward_single(self, x):
        return self.conv_cls(x), self.conv_reg(x)

    def forward(self, feats):
        return multi_apply(self.forward_single, feats)

    def loss_single(self, cls_score, bbox_pred, labels, num_total_samples):
        scores = torch.sigmoid(cls_score)
        loss_cls = F.binary_cross_entropy(scores, labels, reduction="sum") / num_total_samples
        loss_bbox = F.l1_loss(bbox_pred, bbox_pred.detach())
        return loss_cls, loss_bbox

    def loss(self, cls_scores, bbox_preds, labels_list):
        losses_cls, losses_bbox = multi_apply(
            self.loss_single, cls_scores, bbox_preds, labels_list, num_total_samples=8)
        return dict(loss_cls=losses_cls, loss_bbox=losses_bbox)
