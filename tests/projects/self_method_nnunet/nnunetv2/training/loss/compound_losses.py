import torch
from torch import nn


class SoftDiceLoss(nn.Module):
    def __init__(self, smooth=1.0):
        super().__init__()
        self.smooth = smooth

    def forward(self, x, y):
        axes = tuple(range(2, x.ndim))
        intersect = (x * y).sum(axes)
        denominator = x.sum(axes) + y.sum(axes)
        return -((2 * intersect + self.smooth) / (denominator + self.smooth).clamp_min(1e-5)).mean()


class DC_and_BCE_loss(nn.Module):
    """Region-based training: sigmoid probabilities for the dice term and the BCE term."""

    def __init__(self, bce_kwargs, soft_dice_kwargs, weight_ce=1, weight_dice=1):
        super().__init__()
        self.weight_ce = weight_ce
        self.weight_dice = weight_dice
        self.ce = nn.BCELoss(**bce_kwargs)
        self.dc = SoftDiceLoss(**soft_dice_kwargs)

    def forward(self, net_output, target):
        probs = torch.sigmoid(net_output)
        target_regions = target.float()
        dc_loss = self.dc(probs, target_regions)
        ce_loss = self.ce(probs, target_regions)
        return self.weight_ce * ce_loss + self.weight_dice * dc_loss
