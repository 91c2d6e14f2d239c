import torch.nn as nn

from ultralytics.models.sam.modules.encoders import PromptEncoder


class Sam(nn.Module):
    def __init__(self):
        super().__init__()
        self.prompt_encoder = PromptEncoder()

    def forward(self, points, masks):
        return self.prompt_encoder(points, masks)
