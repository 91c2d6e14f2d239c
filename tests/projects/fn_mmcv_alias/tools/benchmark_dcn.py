"""Time the deformable convolution under mixed precision (mmcv's tests/test_ops/test_deform_conv.py
`_test_amp_deformconv` style)."""
import time

import torch

from mmcv.ops import deform_conv2d


def bench(batch=8, channels=64, size=64, steps=20):
    x = torch.randn(batch, channels, size, size, device='cuda', requires_grad=True)
    offset = torch.randn(batch, 18, size, size, device='cuda', requires_grad=True)
    weight = torch.randn(channels, channels, 3, 3, device='cuda', requires_grad=True)
    start = time.time()
    for _ in range(steps):
        with torch.autocast('cuda', dtype=torch.float16):
            out = deform_conv2d(x, offset, weight)
        out.sum().backward()
    torch.cuda.synchronize()
    return (time.time() - start) / steps


def bench_fp32(batch=8, channels=64, size=64):
    x = torch.randn(batch, channels, size, size, device='cuda')
    offset = torch.randn(batch, 18, size, size, device='cuda')
    weight = torch.randn(channels, channels, 3, 3, device='cuda')
    return deform_conv2d(x, offset, weight)


if __name__ == '__main__':
    print(bench())
