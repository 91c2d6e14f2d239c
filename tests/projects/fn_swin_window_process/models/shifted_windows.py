import torch
from torch import nn

try:
    from kernels.window_process.window_process import ShiftPartition, MergeUnshift
except ImportError:
    ShiftPartition = MergeUnshift = None


def to_windows(x, size):
    b, h, w, c = x.shape
    x = x.view(b, h // size, size, w // size, size, c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, size * size, c)


def from_windows(windows, size, b, h, w):
    c = windows.shape[-1]
    x = windows.view(b, h // size, w // size, size, size, c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(b, h, w, c)


class ShiftedBlock(nn.Module):
    def __init__(self, dim, window, shift, fused):
        super().__init__()
        self.window = window
        self.shift = shift
        self.fused = fused
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, h, w, c = x.shape
        y = self.norm(x)
        if self.fused:
            windows = ShiftPartition.apply(y, b, h, w, c, -self.shift, self.window)
        else:
            windows = to_windows(torch.roll(y, (-self.shift, -self.shift), (1, 2)), self.window)
        windows = self.proj(self.attn(windows, windows, windows)[0])
        if self.fused:
            y = MergeUnshift.apply(windows, b, h, w, c, self.shift, self.window)
        else:
            y = torch.roll(from_windows(windows, self.window, b, h, w), (self.shift, self.shift), (1, 2))
        return x + y


class ShiftedWindowNet(nn.Module):
    def __init__(self, dim, depth, window, fused=False):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 4, 4)
        self.blocks = nn.ModuleList(
            ShiftedBlock(dim, window, 0 if i % 2 == 0 else window // 2, fused) for i in range(depth))
        self.head = nn.Linear(dim, 1000)

    def forward(self, images):
        x = self.embed(images).permute(0, 2, 3, 1)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean((1, 2)))
