from ..builder import DETECTORS
from .two_stage import TwoStageDetector


@DETECTORS.register_module()
class MaskRCNN(TwoStageDetector):
    def __init__(self, roi_head, init_cfg=None):
        super().__init__(roi_head, init_cfg=init_cfg)
