import torch.nn as nn


def is_parallel(model):
    """True for a model wrapped in DataParallel or DistributedDataParallel."""
    return isinstance(model, (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel))


def de_parallel(model):
    """The single-GPU model: `.module` of a DP/DDP wrapper, else the model itself."""
    return model.module if is_parallel(model) else model
