from .rcnn import MaskRCNNX
