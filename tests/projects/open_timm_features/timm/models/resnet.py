"""PyTorch ResNet

This started as a copy of https://github.com/pytorch/vision 'resnet.py' (BSD-3-Clause) with
additional dropout and dynamic global avg/max pool.

Copyright 2019, Ross Wightman
"""
import torch.nn as nn

from ._registry import register_model

__all__ = ['ResNet', 'BasicBlock']


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn1(self.conv1(x)) + x)


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes=1000):
        super().__init__()
        self.num_classes = num_classes
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.layers = nn.Sequential(*[BasicBlock(64, 64) for _ in range(sum(layers))])
        self.fc = nn.Linear(64, num_classes)

    def forward_features(self, x, patch_mask=None):
        return self.layers(self.conv1(x))

    def forward_head(self, x, pre_logits: bool = False):
        x = x.mean((2, 3))
        return x if pre_logits else self.fc(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


@register_model
def resnet18(pretrained=False, **kwargs):
    return ResNet(layers=(2, 2, 2, 2), **kwargs)
