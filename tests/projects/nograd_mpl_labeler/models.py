import torch.nn as nn
import torch.nn.functional as F


class WideResNet(nn.Module):
    def __init__(self, num_classes=10, width=32):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        out = F.leaky_relu(self.bn(self.conv(x)), 0.1)
        return self.fc(F.adaptive_avg_pool2d(out, 1).flatten(1))
