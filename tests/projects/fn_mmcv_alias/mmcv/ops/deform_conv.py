from typing import Optional, Tuple, Union

import torch
import torch.nn as nn
from torch import Tensor
from torch.autograd import Function
from torch.autograd.function import once_differentiable

from ..utils import ext_loader

ext_module = ext_loader.load_ext('_ext', [
    'deform_conv_forward', 'deform_conv_backward_input',
    'deform_conv_backward_parameters'
])


class DeformConv2dFunction(Function):

    @staticmethod
    def forward(ctx,
                input: Tensor,
                offset: Tensor,
                weight: Tensor,
                stride: Union[int, Tuple[int, ...]] = 1,
                padding: Union[int, Tuple[int, ...]] = 0,
                dilation: Union[int, Tuple[int, ...]] = 1,
                groups: int = 1,
                deform_groups: int = 1,
                bias: bool = False,
                im2col_step: int = 32) -> Tensor:
        ctx.stride = stride
        ctx.padding = padding
        ctx.dilation = dilation
        ctx.groups = groups
        ctx.deform_groups = deform_groups
        ctx.im2col_step = im2col_step
        ctx.save_for_backward(input, offset, weight)
        output = input.new_empty(input.shape)
        ctx.bufs_ = [input.new_empty(0), input.new_empty(0)]
        ext_module.deform_conv_forward(
            input, weight, offset, output, ctx.bufs_[0], ctx.bufs_[1],
            kW=weight.size(3), kH=weight.size(2), im2col_step=ctx.im2col_step)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output: Tensor) -> Tuple[Optional[Tensor], ...]:
        input, offset, weight = ctx.saved_tensors
        grad_input = grad_offset = grad_weight = None
        grad_output = grad_output.contiguous()
        grad_input = torch.zeros_like(input)
        grad_offset = torch.zeros_like(offset)
        ext_module.deform_conv_backward_input(
            input, offset, grad_output, grad_input, grad_offset, weight, ctx.bufs_[0],
            kW=weight.size(3), kH=weight.size(2), im2col_step=ctx.im2col_step)
        grad_weight = torch.zeros_like(weight)
        ext_module.deform_conv_backward_parameters(
            input, offset, grad_output, grad_weight, ctx.bufs_[0], ctx.bufs_[1],
            kW=weight.size(3), kH=weight.size(2), im2col_step=ctx.im2col_step)
        return grad_input, grad_offset, grad_weight, None, None, None, None, None, None, None


deform_conv2d = DeformConv2dFunction.apply


class DeformConv2d(nn.Module):

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(out_channels, in_channels, kernel_size, kernel_size))

    def forward(self, x: Tensor, offset: Tensor) -> Tensor:
        return deform_conv2d(x, offset, self.weight)


class DeformConv2dPack(DeformConv2d):

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.conv_offset = nn.Conv2d(self.weight.size(1), 18, kernel_size=3, padding=1)

    def forward(self, x: Tensor) -> Tensor:  # type: ignore
        offset = self.conv_offset(x)
        return deform_conv2d(x, offset, self.weight)
