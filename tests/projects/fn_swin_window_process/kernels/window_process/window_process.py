import torch
import swin_window_process


class ShiftPartition(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, b, h, w, c, shift, window):
        ctx.shape = (b, h, w, c, shift, window)
        return swin_window_process.shift_partition_forward(x, b, h, w, c, shift, window)

    @staticmethod
    def backward(ctx, grad):
        b, h, w, c, shift, window = ctx.shape
        grad_x = swin_window_process.shift_partition_backward(grad, b, h, w, c, shift, window)
        return grad_x, None, None, None, None, None, None


class MergeUnshift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, windows, b, h, w, c, shift, window):
        ctx.shape = (b, h, w, c, shift, window)
        return swin_window_process.merge_unshift_forward(windows, b, h, w, c, shift, window)

    @staticmethod
    def backward(ctx, grad):
        b, h, w, c, shift, window = ctx.shape
        # grad_windows = ctx.saved_tensors[0]
        grad_windows = swin_window_process.merge_unshift_backward(grad, b, h, w, c, shift, window)
        return grad_windows, None, None, None, None, None, None
