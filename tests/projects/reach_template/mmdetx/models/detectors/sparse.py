import torch

from ..builder import DETECTORS
from .base import BaseDetector


@DETECTORS.register_module()
class SparseDetector(BaseDetector):
    """Overrides forward without @auto_fp16: its forward_train never runs under the base's region."""

    def extract_feat(self, img):
        return img.flatten(2).transpose(1, 2)

    def forward(self, img, img_metas, return_loss=True, **kwargs):
        return self.forward_train(img, img_metas, **kwargs)

    def forward_train(self, img, img_metas, query_mask=None):
        x = self.extract_feat(img)
        scores = x @ x.transpose(-2, -1)
        scores = scores.masked_fill(~query_mask[:, None, :], -1e9)
        return dict(loss_query=scores.softmax(dim=-1).mean())
