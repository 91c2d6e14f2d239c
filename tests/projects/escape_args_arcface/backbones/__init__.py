from torch import nn


def get_model(name, num_features=512):
    if name == "mbf":
        return nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.PReLU(8), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    raise ValueError(name)
