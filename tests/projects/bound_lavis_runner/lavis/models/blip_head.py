import torch
import torch.nn as nn


class ITMHead(nn.Module):
    def __init__(self, cfg, dim=256):
        super().__init__()
        self.cfg = cfg
        self.proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, 2)

    def forward(self, image_embeds, text_embeds, mask):
        sim = self.proj(image_embeds) @ text_embeds.transpose(-1, -2)
        sim = sim.masked_fill(mask, self.cfg.mask_value)
        h = sim.softmax(-1) @ text_embeds
        return self.out(h / (h.abs().amax(-1, keepdim=True) + self.cfg.norm_eps))


class Exporter:
    def __init__(self, head):
        self.head = head

    def fp16(self):
        self.head_fp16 = self.head.half()
        return self.head_fp16
