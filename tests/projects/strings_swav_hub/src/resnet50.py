import torch
import torch.nn as nn


class ResNet(nn.Module):
    def __init__(self, layers, widen=1, normalize=False, output_dim=0, nmb_prototypes=0):
        super().__init__()
        width = 64 * widen
        self.l2norm = normalize
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(inplace=True))
        self.body = nn.Sequential(*[nn.Conv2d(width, width, 3, padding=1) for _ in range(sum(layers))])
        self.projection_head = nn.Linear(width, output_dim) if output_dim > 0 else None

    def forward_backbone(self, x, valid=None):
        x = self.body(self.stem(x))
        if valid is not None:  # crops padded to one size: the padding must never win the max pool
            x = x.masked_fill(~valid, -1e9)
        return torch.flatten(x.amax(dim=(2, 3)), 1)

    def forward_head(self, x):
        if self.projection_head is not None:
            x = self.projection_head(x)
        if self.l2norm:
            x = nn.functional.normalize(x, dim=1, p=2)
        return x

    def forward(self, inputs, valid=None):
        return self.forward_head(self.forward_backbone(inputs, valid))


class Linear(nn.Module):
    def __init__(self, dim, num_labels=1000):
        super().__init__()
        self.linear = nn.Linear(dim, num_labels)

    def forward(self, x):
        x = x.masked_fill(x == 0, -1e9)
        return self.linear(x)


def resnet50(**kwargs):
    return ResNet([3, 4, 6, 3], **kwargs)


def resnet50w2(**kwargs):
    return ResNet([3, 4, 6, 3], widen=2, **kwargs)


def linear(**kwargs):
    return Linear(2048, **kwargs)
