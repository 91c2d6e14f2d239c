"""The clean twin of chosen_loss_slowfast: the string picks the with-logits loss, shaped like facebookresearch/SlowFast
(slowfast/models/losses.py `_LOSSES` and `get_loss_func`, here beside the head that uses it)."""
import torch
import torch.nn as nn

_LOSSES = {
    "cross_entropy": nn.CrossEntropyLoss,
    "bce": nn.BCELoss,
    "bce_logit": nn.BCEWithLogitsLoss,
}


def get_loss_func(loss_name):
    return _LOSSES[loss_name]


class MultiLabelHead(nn.Module):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.proj = nn.Linear(dim, num_classes)
        self.loss_fun = get_loss_func("bce_logit")(reduction="mean")

    def forward(self, feats):
        return self.proj(feats)

    def loss(self, feats, labels):
        preds = self(feats)
        return self.loss_fun(preds, labels)
