from mmcv.runner import BaseModule, auto_fp16

from ..builder import DETECTORS, build_head


@DETECTORS.register_module()
class AttnDetector(BaseModule):
    def __init__(self, head, init_cfg=None):
        super().__init__(init_cfg)
        self.head = build_head(head)
        self.fp16_enabled = False

    @auto_fp16(apply_to=("img",))
    def forward(self, img, mask, labels=None):
        scores = self.head(img, mask)
        if labels is None:
            return scores
        return self.head.loss(scores, labels)
