import torch.nn as nn


class ResNetBasicHead(nn.Module):
    def __init__(self, dim_in, num_classes):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.projection = nn.Linear(dim_in, num_classes, bias=True)

    def forward(self, x):
        return self.projection(self.avgpool(x).flatten(1))
