import torch
import torch.nn as nn

from models.common import Conv


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=(), ch=()):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.na = 3
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        for i in range(len(self.m)):
            x[i] = self.m[i](x[i])
        return x


class Model(nn.Module):
    def __init__(self, cfg='yolov5s.yaml', ch=3, nc=None, anchors=None):
        super().__init__()
        self.backbone = nn.Sequential(Conv(ch, 32, 6, 2, 2), Conv(32, 64, 3, 2))
        self.detect = Detect(nc or 80, anchors, (64,))

    def forward(self, x, augment=False, profile=False, visualize=False):
        return self._forward_once(x, profile, visualize)

    def _forward_once(self, x, profile=False, visualize=False):
        x = self.backbone(x)
        return self.detect([x])
