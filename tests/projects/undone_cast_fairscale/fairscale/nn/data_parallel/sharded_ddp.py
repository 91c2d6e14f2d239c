"""A data-parallel wrapper that shards optimizer state (fairscale/nn/data_parallel)."""
import torch
from torch import nn


class ShardedDataParallel(nn.Module):
    def __init__(self, module, optimizer, reduce_buffer_size=0):
        super().__init__()
        self.module = module
        self.optimizer = optimizer
        self.reduce_buffer_size = reduce_buffer_size

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def to(self, device=None, dtype=None, non_blocking=False):
        self.module.to(device=device, dtype=dtype, non_blocking=non_blocking)
        return self
