from mmcv.cnn import MODELS as MMCV_MODELS
from mmcv.utils import Registry

MODELS = Registry("models", parent=MMCV_MODELS)
DETECTORS = MODELS
HEADS = MODELS


def build_detector(cfg):
    return DETECTORS.build(cfg)


def build_head(cfg):
    return HEADS.build(cfg)
