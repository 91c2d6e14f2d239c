from .build import META_ARCH_REGISTRY, build_model  # isort:skip

from .rcnn import GeneralizedRCNN
from .retinanet import RetinaNet
