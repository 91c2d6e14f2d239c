import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=80, ch=(32,)):
        super().__init__()
        self.no = nc + 5
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * 3, 1) for x in ch)

    def forward(self, x):
        return [conv(x) for conv in self.m]


class Model(nn.Module):
    def __init__(self, cfg="yolov7.yaml", ch=3, nc=80):
        super().__init__()
        self.yaml_file = cfg
        self.backbone = nn.Sequential(nn.Conv2d(ch, 32, 3, 2, 1), nn.SiLU())
        self.detect = Detect(nc, (32,))

    def forward(self, x):
        return self.detect(self.backbone(x))
