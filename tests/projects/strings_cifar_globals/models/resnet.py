import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, num_blocks, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, padding=1, bias=False)
        self.layers = nn.Sequential(*[BasicBlock(64, 64) for _ in range(num_blocks)])
        self.score = nn.Conv2d(64, 1, 1)
        self.linear = nn.Linear(64, num_classes)

    def forward(self, x, keep):
        feat = self.layers(F.relu(self.conv1(x)))
        scores = self.score(feat).flatten(1)
        weights = scores.masked_fill(~keep, -1e9).softmax(-1)
        return self.linear((feat.flatten(2) * weights[:, None, :]).sum(-1))


def ResNet18(num_classes=10):
    return ResNet(8, num_classes)
