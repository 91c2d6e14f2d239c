from .resnet import *
from .vgg import *
