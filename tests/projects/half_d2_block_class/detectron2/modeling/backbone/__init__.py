from .build import build_backbone
from .resnet import ResNet, BottleneckBlock, build_resnet_backbone
