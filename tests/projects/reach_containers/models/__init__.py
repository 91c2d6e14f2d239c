from .registry import MODELS
from .segnet import SegNet
