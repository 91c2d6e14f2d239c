import torch
from torch import nn

from x_transformers.attend import Attention


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult), nn.GELU(), nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class AttentionLayers(nn.Module):
    def __init__(self, dim, depth, heads=8, causal=False):
        super().__init__()
        self.layers = nn.ModuleList([])
        self.layer_types = ("a", "f") * depth
        for layer_type in self.layer_types:
            if layer_type == "a":
                layer = Attention(dim, heads=heads, causal=causal)
            else:
                layer = FeedForward(dim)
            self.layers.append(nn.ModuleList([nn.LayerNorm(dim), layer]))
        self.final_norm = nn.LayerNorm(dim)

    def forward(self, x, mask=None):
        for layer_type, (norm, block) in zip(self.layer_types, self.layers):
            residual = x
            x = norm(x)
            if layer_type == "a":
                x = block(x, mask=mask)
            else:
                x = block(x)
            x = x + residual
        return self.final_norm(x)


class Decoder(AttentionLayers):
    def __init__(self, **kwargs):
        super().__init__(causal=True, **kwargs)


class TransformerWrapper(nn.Module):
    def __init__(self, *, num_tokens, max_seq_len, attn_layers):
        super().__init__()
        dim = attn_layers.final_norm.normalized_shape[0]
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.pos_emb = nn.Embedding(max_seq_len, dim)
        self.attn_layers = attn_layers
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, x, mask=None):
        pos = torch.arange(x.shape[1], device=x.device)
        x = self.token_emb(x) + self.pos_emb(pos)
        x = self.attn_layers(x, mask=mask)
        return self.to_logits(x)
