import torch.nn as nn

from lavis.models.base_model import BaseModel


class Blip2Qformer(BaseModel):
    def __init__(self, vision_width=64, embed_dim=32):
        super().__init__()
        self.vision_proj = nn.Linear(vision_width, embed_dim)
        self.text_proj = nn.Linear(vision_width, embed_dim)

    def forward(self, samples):
        image_feats = self.vision_proj(samples["image"])
        text_feat = self.text_proj(samples["text"])
        return (image_feats - text_feat).pow(2).mean()
