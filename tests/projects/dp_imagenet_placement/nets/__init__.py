from .wide_resnet import WideResNet


def build_net(arch):
    widths = {"wrn50_2": 2, "wrn101_2": 2}
    depths = {"wrn50_2": [3, 4, 6, 3], "wrn101_2": [3, 4, 23, 3]}
    return WideResNet(depths[arch], width=widths[arch])
