import torch.nn as nn


class Unet(nn.Module):
    def __init__(self, dim=32, channels=3):
        super().__init__()
        self.init_conv = nn.Conv2d(channels, dim, 7, padding=3)
        self.mid = nn.Conv2d(dim, dim, 3, padding=1)
        self.final_conv = nn.Conv2d(dim, channels, 1)

    def forward(self, x):
        return self.final_conv(self.mid(self.init_conv(x).relu()).relu())
