import torch
import torch.nn.functional as F
from torch import nn

from detectron2.layers import Conv2d


class CNNBlockBase(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.stride = stride


class BasicStem(CNNBlockBase):
    def __init__(self, in_channels=3, out_channels=64):
        super().__init__(in_channels, out_channels, 4)
        self.conv1 = Conv2d(in_channels, out_channels, kernel_size=7, stride=2, padding=3, bias=False)

    def forward(self, x):
        x = F.relu_(self.conv1(x))
        return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


class BottleneckBlock(CNNBlockBase):
    def __init__(self, in_channels, out_channels, *, bottleneck_channels, stride=1):
        super().__init__(in_channels, out_channels, stride)
        self.conv1 = Conv2d(in_channels, bottleneck_channels, kernel_size=1, stride=stride, bias=False)
        self.conv2 = Conv2d(bottleneck_channels, out_channels, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        out = F.relu_(self.conv1(x))
        out = self.conv2(out)
        if self.stride > 1:
            # the shortcut max-pools the valid pixels only: zero padding must never win
            valid = x.abs().sum(dim=1, keepdim=True) > 0
            x = F.max_pool2d(x.masked_fill(~valid, -1e9), kernel_size=self.stride, stride=self.stride)
        return F.relu_(out + x)


class ResNet(nn.Module):
    def __init__(self, stem, stages, out_features=None):
        super().__init__()
        self.stem = stem
        self.stage_names, self.stages = [], []
        for i, blocks in enumerate(stages):
            name = "res" + str(i + 2)
            stage = nn.Sequential(*blocks)
            self.add_module(name, stage)
            self.stage_names.append(name)
            self.stages.append(stage)
        self._out_features = out_features

    def forward(self, x):
        outputs = {}
        x = self.stem(x)
        for name, stage in zip(self.stage_names, self.stages):
            x = stage(x)
            outputs[name] = x
        return outputs

    @staticmethod
    def make_stage(block_class, num_blocks, *, in_channels, out_channels, first_stride=1, **kwargs):
        blocks = []
        for i in range(num_blocks):
            stride = first_stride if i == 0 else 1
            blocks.append(block_class(in_channels, out_channels, stride=stride, **kwargs))
            in_channels = out_channels
        return blocks


def build_resnet_backbone(cfg):
    stem = BasicStem(in_channels=3, out_channels=cfg.MODEL.RESNETS.STEM_OUT_CHANNELS)
    in_channels, out_channels = 64, 256
    stages = []
    for idx, num_blocks in enumerate(cfg.MODEL.RESNETS.DEPTHS):
        blocks = ResNet.make_stage(
            block_class=BottleneckBlock,
            num_blocks=num_blocks,
            first_stride=1 if idx == 0 else 2,
            in_channels=in_channels,
            out_channels=out_channels,
            bottleneck_channels=out_channels // 4,
        )
        stages.append(blocks)
        in_channels = out_channels
        out_channels *= 2
    return ResNet(stem, stages, out_features=cfg.MODEL.RESNETS.OUT_FEATURES)
