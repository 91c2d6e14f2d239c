import torch.nn as nn


class VGG(nn.Module):
    def __init__(self, depth, num_classes=10):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Conv2d(64 if layers else 3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(64, num_classes)

    def forward(self, x, keep):
        return self.classifier(self.features(x).mean((2, 3)))


def VGG11(num_classes=10):
    return VGG(8, num_classes)
