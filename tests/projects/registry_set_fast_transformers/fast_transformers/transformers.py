import torch
import torch.nn.functional as F
from torch.nn import Dropout, LayerNorm, Linear, Module, ModuleList


class AttentionLayer(Module):
    def __init__(self, attention, d_model, n_heads):
        super().__init__()
        d_keys = d_model // n_heads
        self.inner_attention = attention
        self.query_projection = Linear(d_model, d_keys * n_heads)
        self.key_projection = Linear(d_model, d_keys * n_heads)
        self.value_projection = Linear(d_model, d_keys * n_heads)
        self.out_projection = Linear(d_keys * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, queries, keys, values, key_lengths=None):
        N, L, _ = queries.shape
        _, S, _ = keys.shape
        H = self.n_heads
        queries = self.query_projection(queries).view(N, L, H, -1)
        keys = self.key_projection(keys).view(N, S, H, -1)
        values = self.value_projection(values).view(N, S, H, -1)
        new_values = self.inner_attention(queries, keys, values, key_lengths=key_lengths).view(N, L, -1)
        return self.out_projection(new_values)


class TransformerEncoderLayer(Module):
    def __init__(self, attention, d_model, d_ff=None, dropout=0.1):
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.attention = attention
        self.linear1 = Linear(d_model, d_ff)
        self.linear2 = Linear(d_ff, d_model)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout = Dropout(dropout)

    def forward(self, x, length_mask=None):
        x = x + self.dropout(self.attention(x, x, x, key_lengths=length_mask))
        y = x = self.norm1(x)
        y = self.dropout(F.gelu(self.linear1(y)))
        y = self.dropout(self.linear2(y))
        return self.norm2(x + y)


class TransformerEncoder(Module):
    def __init__(self, layers, norm_layer=None):
        super().__init__()
        self.layers = ModuleList(layers)
        self.norm = norm_layer

    def forward(self, x, length_mask=None):
        for layer in self.layers:
            x = layer(x, length_mask=length_mask)
        if self.norm is not None:
            x = self.norm(x)
        return x
