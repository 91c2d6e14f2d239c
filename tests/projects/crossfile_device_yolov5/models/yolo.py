import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, cfg="yolov5s.yaml", ch=3, nc=80):
        super().__init__()
        self.yaml_file = cfg
        self.backbone = nn.Sequential(nn.Conv2d(ch, 32, 3, 2, 1), nn.SiLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.SiLU())
        self.head = nn.Conv2d(64, 3 * (nc + 5), 1)

    def forward(self, x):
        return self.head(self.backbone(x))
