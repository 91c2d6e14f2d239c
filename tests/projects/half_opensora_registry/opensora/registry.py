from copy import deepcopy

import torch.nn as nn
from mmengine.registry import Registry


def build_module(module, builder: Registry, **kwargs):
    if isinstance(module, dict):
        cfg = deepcopy(module)
        for k, v in kwargs.items():
            cfg[k] = v
        return builder.build(cfg)
    elif isinstance(module, nn.Module):
        return module
    raise TypeError(type(module))


MODELS = Registry("model", locations=["opensora.models"])
DATASETS = Registry("dataset", locations=["opensora.datasets"])
