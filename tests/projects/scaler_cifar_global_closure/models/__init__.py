from .resnet import ResNet18
