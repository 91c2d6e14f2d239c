from functools import partial

import torch


def multi_apply(func, *args, **kwargs):
    """Apply function to a list of arguments."""
    pfunc = partial(func, **kwargs) if kwargs else func
    map_results = map(pfunc, *args)
    return tuple(map(list, zip(*map_results)))


def unmap(data, count, inds, fill=0):
    ret = data.new_full((count,), fill)
    ret[inds.type(torch.bool)] = data
    return ret
