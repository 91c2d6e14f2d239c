from .build import build_model  # isort:skip
from .rcnn import GeneralizedRCNN

__all__ = list(globals().keys())
