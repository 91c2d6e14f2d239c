from .resnet import *
from .vision_transformer import *
from ._registry import create_model, list_models, register_model
