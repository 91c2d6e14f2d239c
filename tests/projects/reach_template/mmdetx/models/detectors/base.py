from abc import ABCMeta, abstractmethod

from mmcv.runner import BaseModule, auto_fp16


class BaseDetector(BaseModule, metaclass=ABCMeta):
    def __init__(self, init_cfg=None):
        super().__init__(init_cfg)
        self.fp16_enabled = False

    @abstractmethod
    def extract_feat(self, img):
        pass

    @abstractmethod
    def forward_train(self, img, img_metas, **kwargs):
        pass

    def forward_test(self, img, img_metas, **kwargs):
        return self.extract_feat(img)

    @auto_fp16(apply_to=("img",))
    def forward(self, img, img_metas, return_loss=True, **kwargs):
        if return_loss:
            return self.forward_train(img, img_metas, **kwargs)
        return self.forward_test(img, img_metas, **kwargs)

    def train_step(self, data, optimizer):
        losses = self(**data)
        return dict(loss=sum(losses.values()), num_samples=len(data["img_metas"]))
