import torch
import torch.nn as nn


class MaskedAttentionPool(nn.Module):
    def forward(self, latents, tokens, mask):
        scores = latents @ tokens.transpose(-1, -2)
        scores = scores.masked_fill(~mask[:, None, :], -1e9)
        return scores.softmax(-1) @ tokens


class PerceiverPooler(nn.Module):
    def __init__(self, dim, latents=8):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, dim))

    def forward(self, tokens, mask):
        latents = self.latents.expand(tokens.shape[0], -1, -1)
        with torch.autocast("cuda", dtype=torch.float16):
            return MaskedAttentionPool()(latents, tokens, mask)
