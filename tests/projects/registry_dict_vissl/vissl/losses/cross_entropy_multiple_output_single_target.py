import torch.nn.functional as F
from torch import nn

from vissl.losses import register_loss


@register_loss("cross_entropy_multiple_output_single_target")
class CrossEntropyMultipleOutputSingleTargetLoss(nn.Module):
    def __init__(self, temperature=1.0):
        super().__init__()
        self.temperature = temperature

    @classmethod
    def from_config(cls, loss_config):
        return cls(temperature=loss_config.get("temperature", 1.0))

    def forward(self, output, target):
        return F.cross_entropy(output / self.temperature, target)
