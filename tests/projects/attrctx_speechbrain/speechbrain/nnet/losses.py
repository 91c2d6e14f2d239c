import torch.nn.functional as F


def bce_loss(probabilities, targets, length=None):
    """Binary cross-entropy on probabilities, averaged over the valid frames."""
    loss = F.binary_cross_entropy(probabilities, targets, reduction="none")
    if length is not None:
        loss = loss * length.unsqueeze(-1)
    return loss.mean()
