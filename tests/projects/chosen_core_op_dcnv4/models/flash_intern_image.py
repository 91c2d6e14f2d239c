"""A backbone whose core op a string picks, shaped like OpenGVLab/DCNv4's FlashInternImage
(`core_op="DCNv4"` looked up by name among the ops), with the Function in the same module."""
import sys

import torch
import torch.nn as nn
from torch.autograd import Function


class DCNv4Function(Function):
    @staticmethod
    def forward(ctx, value, offset, group):
        ctx.save_for_backward(value, offset)
        return torch.bmm(value, offset)

    @staticmethod
    def backward(ctx, grad_output):
        value, offset = ctx.saved_tensors
        return torch.bmm(grad_output, offset.transpose(1, 2)), None, None


class DCNv4(nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.value_proj = nn.Linear(channels, channels)
        self.offset = nn.Parameter(torch.randn(channels, channels))

    def forward(self, x):
        value = self.value_proj(x)
        return DCNv4Function.apply(value, self.offset.expand(x.shape[0], -1, -1), 4)


class DepthwiseConv(nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1, groups=channels)

    def forward(self, x):
        return self.conv(x)


class FlashInternImage(nn.Module):
    def __init__(self, channels=64, core_op="DCNv4"):
        super().__init__()
        layer = getattr(sys.modules[__name__], core_op)
        self.layer = layer(channels)
        self.head = nn.Linear(channels, 10)

    def forward(self, x):
        return self.head(self.layer(x))
