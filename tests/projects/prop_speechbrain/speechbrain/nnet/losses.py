import torch
import torch.nn.functional as F


def bce_loss(probabilities, targets, length=None):
    if length is not None:
        mask = torch.arange(targets.shape[1], device=targets.device)[None, :] < length[:, None]
        return F.binary_cross_entropy(probabilities[mask], targets[mask].float())
    return F.binary_cross_entropy(probabilities, targets.float())
