import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)

    def forward(self, x):
        return F.relu(self.bn1(self.conv1(x)))


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=10):
        super(ResNet, self).__init__()
        self.layer1 = block(3, 64)
        self.linear = nn.Linear(64, num_classes)

    def forward(self, x):
        out = F.adaptive_avg_pool2d(self.layer1(x), 1)
        return self.linear(out.view(out.size(0), -1))


def ResNet18():
    return ResNet(BasicBlock, [2, 2, 2, 2])
