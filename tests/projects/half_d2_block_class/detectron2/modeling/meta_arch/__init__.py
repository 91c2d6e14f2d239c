from .build import build_model
from .rcnn import GeneralizedRCNN
