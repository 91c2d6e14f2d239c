import torch
from torch import nn


class ComputeLoss:
    def __init__(self, model):
        self.bce = nn.BCEWithLogitsLoss()
        self.device = next(model.parameters()).device

    def __call__(self, p, targets):
        loss = self.bce(p.mean(dim=(2, 3)), targets)
        return loss, loss.detach()
