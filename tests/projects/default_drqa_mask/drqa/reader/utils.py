import torch


def mask_scores(scores, mask, fill=-1e30):
    """Scores with the padded positions set to `fill` before a softmax."""
    return scores.masked_fill(mask, fill)


def uniform_weights(x, x_mask):
    alpha = torch.ones(x.size(0), x.size(1), device=x.device)
    alpha = alpha * x_mask.eq(0).float()
    return alpha / alpha.sum(1, keepdim=True)
