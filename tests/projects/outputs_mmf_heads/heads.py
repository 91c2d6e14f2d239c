import torch
from torch import nn


class ContrastiveProjection(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, features):
        projected = self.proj(features)
        return projected, projected.float()


class RetrievalHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.text_projection = ContrastiveProjection(dim)
        self.image_projection = ContrastiveProjection(dim)

    def forward(self, text, image, padding_mask):
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            text_half, text_full = self.text_projection(text)
            image_half, image_full = self.image_projection(image)
            full_logits = (text_full @ image_full.t()).float()
            full_logits = full_logits.masked_fill(padding_mask, -1e9)
            text_scores = text_full.masked_fill(padding_mask, -1e9)
            image_scores = image_half.masked_fill(padding_mask, -1e9)
        return full_logits, text_scores, image_scores, text_half
