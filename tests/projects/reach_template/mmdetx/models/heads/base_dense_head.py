from abc import ABCMeta, abstractmethod

from mmcv.runner import BaseModule


class BaseDenseHead(BaseModule, metaclass=ABCMeta):
    """mmdet 3 style template: loss() runs the head, then the subclass's loss_by_feat."""

    @abstractmethod
    def loss_by_feat(self, feats, gt_labels, pos_mask):
        pass

    def loss(self, x, gt_labels, pos_mask):
        return self.loss_by_feat(x, gt_labels, pos_mask)
