import torch
import torch.nn as nn

__all__ = ["VGG", "vgg11"]


class VGG(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Conv2d(3, 64, 3, padding=1)
        self.classifier = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.features(x).flatten(2)
        x = x.masked_fill(x == 0, -1e9)
        x = x.softmax(dim=-1).mean(-1)
        return self.classifier(x)


def vgg11(**kwargs):
    return VGG(**kwargs)
