import torch
from torch.nn import Dropout, Module

from fast_transformers.attention_registry import AttentionRegistry


class FullAttention(Module):
    """softmax(QK^T / sqrt(d)) V, with the key padding masked out."""

    def __init__(self, softmax_temp=None, attention_dropout=0.1):
        super().__init__()
        self.softmax_temp = softmax_temp
        self.dropout = Dropout(attention_dropout)

    def forward(self, queries, keys, values, key_lengths=None):
        softmax_temp = self.softmax_temp or 1.0 / queries.shape[-1] ** 0.5
        QK = torch.einsum("nlhe,nshe->nhls", queries, keys)
        if key_lengths is not None:
            QK = QK.masked_fill(key_lengths[:, None, None, :] == 0, -1e9)
        A = self.dropout(torch.softmax(softmax_temp * QK, dim=-1))
        return torch.einsum("nhls,nshd->nlhd", A, values).contiguous()


AttentionRegistry.register("full", FullAttention, ["softmax_temp", "attention_dropout"])
