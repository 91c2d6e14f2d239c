import torch.nn.functional as F


def soft_bce_flat(inp, targ, reduction="mean"):
    return F.binary_cross_entropy(inp.sigmoid(), targ.float(), reduction=reduction)


def mse_flat(inp, targ):
    return F.mse_loss(inp, targ.float())
