import torch
import torch.nn as nn


class Attention(nn.Module):
    """Multi-head attention over the valid tokens of a padded batch."""

    def __init__(self, dim, num_heads=8):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, valid):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.reshape(3, B * self.num_heads, N, -1).unbind(0)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        values = torch.zeros(B * self.num_heads, N, C // self.num_heads, device=x.device)
        values[valid] = v[valid]
        x = (attn @ values).view(B, self.num_heads, N, -1).permute(0, 2, 1, 3).reshape(B, N, C)
        return self.proj(x)


class ImageEncoderViT(nn.Module):
    def __init__(self, embed_dim=768, num_heads=12):
        super().__init__()
        self.attn = Attention(embed_dim, num_heads)
        self.neck = nn.Linear(embed_dim, 256)

    def forward(self, x, valid):
        return self.neck(self.attn(x, valid))
