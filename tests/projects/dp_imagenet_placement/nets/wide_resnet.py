import torch
import torch.nn as nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, width, stride=1):
        super().__init__()
        mid = planes * width
        self.conv1 = nn.Conv2d(inplanes, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut = None
        if stride != 1 or inplanes != planes * self.expansion:
            self.shortcut = nn.Sequential(nn.Conv2d(inplanes, planes * self.expansion, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(planes * self.expansion))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class WideResNet(nn.Module):
    def __init__(self, layers, width=2, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, stride=2, padding=1))
        stages = []
        for i, blocks in enumerate(layers):
            planes = 64 * 2 ** i
            for j in range(blocks):
                stages.append(Bottleneck(self.inplanes, planes, width, stride=2 if j == 0 and i > 0 else 1))
                self.inplanes = planes * Bottleneck.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(self.inplanes, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))
