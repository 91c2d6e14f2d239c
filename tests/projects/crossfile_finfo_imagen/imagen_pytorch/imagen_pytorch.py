import torch
from torch import einsum, nn

from imagen_pytorch.utils import default, exists, max_neg_value


class CrossAttention(nn.Module):
    def __init__(self, dim, context_dim=None, heads=8, dim_head=64):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner = heads * dim_head
        context_dim = default(context_dim, dim)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_k = nn.Linear(context_dim, inner, bias=False)
        self.to_v = nn.Linear(context_dim, inner, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x, context, mask=None):
        q, k, v = self.to_q(x) * self.scale, self.to_k(context), self.to_v(context)
        sim = einsum("b i d, b j d -> b i j", q, k)
        if exists(mask):
            sim = sim.masked_fill(~mask, max_neg_value(x))
        attn = sim.softmax(dim=-1)
        return self.to_out(einsum("b i j, b j d -> b i d", attn, v))


class Unet(nn.Module):
    def __init__(self, dim, text_embed_dim=512):
        super().__init__()
        self.init_conv = nn.Conv2d(3, dim, 3, padding=1)
        self.text_norm = nn.LayerNorm(text_embed_dim)
        self.text_attn = CrossAttention(text_embed_dim, context_dim=dim)
        self.to_cond = nn.Linear(text_embed_dim, dim)
        self.final_conv = nn.Conv2d(dim, 3, 1)

    def forward(self, images, text_embeds, text_mask=None):
        x = self.init_conv(images)
        tokens = x.flatten(2).transpose(1, 2)
        text_tokens = self.text_norm(text_embeds)
        text_tokens = text_tokens + self.text_attn(text_tokens, tokens, mask=text_mask)
        cond = self.to_cond(text_tokens.mean(dim=1))
        return self.final_conv(x + cond[:, :, None, None])
