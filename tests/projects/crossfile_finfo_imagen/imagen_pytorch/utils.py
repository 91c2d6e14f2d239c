import torch


def exists(val):
    return val is not None


def default(val, d):
    if exists(val):
        return val
    return d() if callable(d) else d


def max_neg_value(t):
    return -torch.finfo(t.dtype).max


def cast_tuple(val, length=1):
    if isinstance(val, tuple):
        return val
    return (val,) * length
