import torch.nn as nn
import torch.nn.functional as F
from mmdet.models.losses.utils import weight_reduce_loss
from mmdet.registry import MODELS


@MODELS.register_module()
class ProbFocalLoss(nn.Module):
    def __init__(self, gamma=2.0, alpha=0.25, reduction="mean", loss_weight=1.0):
        super().__init__()
        self.gamma = gamma
        self.alpha = alpha
        self.reduction = reduction
        self.loss_weight = loss_weight

    def forward(self, pred, target, weight=None, avg_factor=None, reduction_override=None):
        reduction = reduction_override if reduction_override else self.reduction
        prob = pred.sigmoid()
        target = F.one_hot(target, num_classes=pred.size(1) + 1)[:, :-1].type_as(pred)
        pt = (1 - prob) * target + prob * (1 - target)
        focal_weight = (self.alpha * target + (1 - self.alpha) * (1 - target)) * pt.pow(self.gamma)
        loss = F.binary_cross_entropy(prob, target, reduction="none") * focal_weight
        loss = weight_reduce_loss(loss, weight, reduction, avg_factor)
        return self.loss_weight * loss
