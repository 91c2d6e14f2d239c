import torch
import torch.nn.functional as F
from torch import nn

from models.xbert import BertConfig, BertModel


class ALBEF(nn.Module):
    def __init__(self, config=None, embed_dim=256):
        super().__init__()
        self.text_encoder = BertModel(BertConfig())
        self.visual_encoder = nn.Sequential(nn.Conv2d(3, 768, 16, 16), nn.Flatten(2))
        self.vision_proj = nn.Linear(768, embed_dim)
        self.text_proj = nn.Linear(768, embed_dim)
        self.temp = nn.Parameter(torch.ones([]) * 0.07)

    def forward(self, image, text_ids, text_mask, idx):
        image_embeds = self.visual_encoder(image).transpose(1, 2)
        image_feat = F.normalize(self.vision_proj(image_embeds[:, 0, :]), dim=-1)
        text_embeds = self.text_encoder(text_ids, text_mask)
        text_feat = F.normalize(self.text_proj(text_embeds[:, 0, :]), dim=-1)
        sim_i2t = image_feat @ text_feat.t() / self.temp
        pos = idx.view(-1, 1).eq(idx.view(1, -1)).float()
        targets = pos / pos.sum(1, keepdim=True)
        return -torch.sum(F.log_softmax(sim_i2t, dim=1) * targets, dim=1).mean()
