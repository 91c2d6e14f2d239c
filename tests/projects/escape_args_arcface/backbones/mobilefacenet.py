from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, in_c, out_c, kernel=3, stride=1, padding=1):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv2d(in_c, out_c, kernel, stride, padding, bias=False),
            nn.BatchNorm2d(out_c),
            nn.PReLU(out_c),
        )

    def forward(self, x):
        return self.layers(x)


class MobileFaceNet(nn.Module):
    def __init__(self, num_features=512, width=8):
        super().__init__()
        self.layers = nn.Sequential(ConvBlock(3, width, stride=2), ConvBlock(width, width))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.features = nn.Sequential(
            nn.Flatten(),
            nn.Linear(width, num_features, bias=False),
            nn.BatchNorm1d(num_features),
        )

    def forward(self, x):
        return self.features(self.pool(self.layers(x)))
