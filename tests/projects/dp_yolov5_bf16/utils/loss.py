import torch
import torch.nn as nn


class ComputeLoss:
    def __init__(self, model):
        self.BCEobj = nn.BCEWithLogitsLoss()

    def __call__(self, p, targets):
        lobj = torch.zeros(1, device=targets.device)
        for pi in p:
            lobj += self.BCEobj(pi[..., 4], torch.zeros_like(pi[..., 4]))
        return lobj, lobj.detach()
