from ._registry import create_model, list_models, register_model
from .vision_transformer import *
