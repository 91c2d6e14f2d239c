import torch.nn as nn


def build_model(config):
    dims = (96, 192, 384, 768)
    layers = [nn.Conv2d(3, dims[0], kernel_size=4, stride=4), nn.GELU()]
    for cin, cout in zip(dims[:-1], dims[1:]):
        layers += [nn.Conv2d(cin, cout, kernel_size=2, stride=2), nn.BatchNorm2d(cout), nn.GELU()]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dims[-1], config.MODEL.NUM_CLASSES)]
    return nn.Sequential(*layers)
