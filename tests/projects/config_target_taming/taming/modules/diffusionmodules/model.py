import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, in_channels, z_channels, ch):
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, ch, 3, padding=1)
        self.conv_out = nn.Conv2d(ch, z_channels, 3, padding=1)

    def forward(self, x):
        return self.conv_out(nn.functional.silu(self.conv_in(x)))


class Decoder(nn.Module):
    def __init__(self, in_channels, z_channels, ch):
        super().__init__()
        self.conv_in = nn.Conv2d(z_channels, ch, 3, padding=1)
        self.conv_out = nn.Conv2d(ch, in_channels, 3, padding=1)

    def forward(self, z):
        return self.conv_out(nn.functional.silu(self.conv_in(z)))
