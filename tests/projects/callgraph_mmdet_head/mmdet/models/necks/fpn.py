import torch.nn as nn


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1)

    def forward(self, x):
        return self.conv(x)


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lateral_convs = nn.ModuleList([ConvModule(c, out_channels) for c in in_channels])

    def forward(self, inputs):
        return [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
