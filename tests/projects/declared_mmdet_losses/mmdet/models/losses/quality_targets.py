import torch


def quality_targets(pred, labels, num_classes):
    """IoU-quality targets for the positive anchors (a GFL-style soft label)."""
    pos_inds = ((labels >= 0) & (labels < num_classes)).nonzero().squeeze(1)
    scores = torch.zeros(pred.shape[0], device=pred.device)
    scores[pos_inds] = pred[pos_inds].detach().sigmoid()
    return scores
