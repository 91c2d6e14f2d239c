import torch.nn as nn


class ResidualConv1dGLU(nn.Module):
    def __init__(self, channels, kernel_size=3, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, kernel_size, padding=dilation, dilation=dilation)
        self.out = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        a, b = self.conv(x).chunk(2, dim=1)
        return x + self.out(a.tanh() * b.sigmoid())


class WaveNet(nn.Module):
    def __init__(self, channels=64, layers=8, out_channels=256):
        super().__init__()
        self.first_conv = nn.Conv1d(1, channels, 1)
        self.conv_layers = nn.ModuleList(ResidualConv1dGLU(channels, dilation=2 ** (i % 4)) for i in range(layers))
        self.last_conv = nn.Conv1d(channels, out_channels, 1)

    def forward(self, x):
        x = self.first_conv(x)
        for f in self.conv_layers:
            x = f(x)
        return self.last_conv(x.relu())
