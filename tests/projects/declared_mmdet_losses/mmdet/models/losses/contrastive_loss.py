import torch

from .utils import weight_reduce_loss


def contrastive_loss(pred, labels, reduction="mean"):
    """InfoNCE over region embeddings: a hand-written softmax of the similarity logits
    (scaled by the temperature in the head)."""
    logits = pred.flatten(1)
    exp_logits = logits.exp()
    probs = exp_logits / exp_logits.sum(1, keepdim=True)
    loss = -torch.log(probs.gather(1, labels[:, None]) + 1e-6)
    return weight_reduce_loss(loss, reduction=reduction)
