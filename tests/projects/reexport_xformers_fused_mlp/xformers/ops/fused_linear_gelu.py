import math

import torch
import torch.nn.functional as F


def _gelu_grad(pre):
    cdf = 0.5 * (1.0 + torch.erf(pre / math.sqrt(2.0)))
    return cdf + pre * torch.exp(-0.5 * pre * pre) / math.sqrt(2.0 * math.pi)


class _FusedLinearGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        pre = F.linear(x, weight, bias)
        ctx.save_for_backward(x, weight, pre)
        return F.gelu(pre)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, pre = ctx.saved_tensors
        grad_pre = grad_out * _gelu_grad(pre)
        return grad_pre @ weight, grad_pre.flatten(0, -2).t() @ x.flatten(0, -2), grad_pre.flatten(0, -2).sum(0)


fused_linear_gelu = _FusedLinearGelu.apply
