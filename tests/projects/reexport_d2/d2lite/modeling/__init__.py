from d2lite.layers import ShapeSpec
from .meta_arch import GeneralizedRCNN, build_model
from .roi_heads import MaskRCNNHead, mask_rcnn_loss

_EXCLUDE = {"ShapeSpec"}
__all__ = [k for k in globals().keys() if k not in _EXCLUDE and not k.startswith("_")]
