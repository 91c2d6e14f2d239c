"""Autograd functions whose backward computes an auxiliary gradient in float32, with autocast
turned off (`torch_autocast(enabled=False)`)."""

import torch

from icefall.utils import torch_autocast


class BalancerFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, max_rms):
        ctx.save_for_backward(x)
        ctx.max_rms = max_rms
        return x

    @staticmethod
    def backward(ctx, x_grad):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            with torch_autocast(enabled=False):
                x = x.to(torch.float32).detach()
                x.requires_grad = True
                rms = (x ** 2).mean().sqrt()
                loss = (rms.clamp(max=ctx.max_rms) / rms).log().abs()
                loss.backward(gradient=torch.ones_like(loss))
                loss_grad = x.grad
        return x_grad + loss_grad.to(x_grad.dtype), None
