from mmcv.utils import Registry

MODELS = Registry("models")
