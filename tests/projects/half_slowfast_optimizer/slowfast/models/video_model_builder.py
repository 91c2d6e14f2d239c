import torch.nn as nn

from .head import ResNetBasicHead


class SlowOnly(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        width = cfg["WIDTH"]
        self.s1 = nn.Conv3d(3, width, kernel_size=(1, 3, 3), padding=(0, 1, 1), bias=False)
        self.s1_bn = nn.BatchNorm3d(width)
        self.head = ResNetBasicHead(width, cfg["NUM_CLASSES"])

    def forward(self, x):
        return self.head(self.s1_bn(self.s1(x)).relu())
