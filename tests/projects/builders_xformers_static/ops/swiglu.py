import torch
import torch.nn.functional as F


def _swiglu_forward(ctx, x, w12, w3):
    x12 = F.linear(x, w12)
    x1, x2 = x12.chunk(2, dim=-1)
    hidden = F.silu(x1) * x2
    ctx.save_for_backward(x, w12, w3, x1, x2)
    return F.linear(hidden, w3)


def _swiglu_backward(ctx, grad_out):
    x, w12, w3, x1, x2 = ctx.saved_tensors
    hidden = F.silu(x1) * x2
    grad_w3 = grad_out.transpose(-2, -1) @ hidden
    grad_hidden = grad_out @ w3
    sig = torch.sigmoid(x1)
    grad_x1 = grad_hidden * x2 * sig * (1 + x1 * (1 - sig))
    grad_x2 = grad_hidden * F.silu(x1)
    grad_x12 = torch.cat([grad_x1, grad_x2], dim=-1)
    return grad_x12 @ w12, grad_x12.transpose(-2, -1) @ x, grad_w3


class SwiGLUFusedFunc(torch.autograd.Function):
    forward = staticmethod(_swiglu_forward)
    backward = staticmethod(_swiglu_backward)


swiglu = SwiGLUFusedFunc.apply
