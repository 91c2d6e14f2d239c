import torch.nn as nn

from .utils import weight_reduce_loss


def gaussian_focal_loss(pred, gaussian_target, alpha=2.0, gamma=4.0, pos_weight=1.0,
                        neg_weight=1.0):
    """Focal loss over a Gaussian heatmap (CornerNet / CenterNet)."""
    eps = 1e-12
    pos_weights = gaussian_target.eq(1)
    neg_weights = (1 - gaussian_target).pow(gamma)
    pos_loss = -(pred + eps).log() * (1 - pred).pow(alpha) * pos_weights
    neg_loss = -(1 - pred + eps).log() * pred.pow(alpha) * neg_weights
    return pos_weight * pos_loss + neg_weight * neg_loss


class GaussianFocalLoss(nn.Module):
    def __init__(self, alpha=2.0, gamma=4.0, reduction="mean", loss_weight=1.0):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma
        self.reduction = reduction
        self.loss_weight = loss_weight

    def forward(self, pred, target, weight=None, avg_factor=None, reduction_override=None):
        reduction = reduction_override if reduction_override else self.reduction
        loss = gaussian_focal_loss(pred, target, alpha=self.alpha, gamma=self.gamma)
        loss = weight_reduce_loss(loss, weight, reduction, avg_factor)
        return self.loss_weight * loss
