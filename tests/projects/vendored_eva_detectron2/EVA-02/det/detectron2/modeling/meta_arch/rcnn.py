import torch
from torch import nn


class GeneralizedRCNN(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, images):
        with torch.cuda.amp.autocast(enabled=False):
            images = images.float()
        return self.backbone(images).sum()
