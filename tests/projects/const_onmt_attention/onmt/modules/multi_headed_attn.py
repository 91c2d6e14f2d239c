import math

import torch
import torch.nn as nn

from onmt.constants import MASK_VALUE


class MultiHeadedAttention(nn.Module):
    def __init__(self, head_count, model_dim, dropout=0.1):
        super().__init__()
        self.dim_per_head = model_dim // head_count
        self.head_count = head_count
        self.linear_keys = nn.Linear(model_dim, model_dim)
        self.linear_values = nn.Linear(model_dim, model_dim)
        self.linear_query = nn.Linear(model_dim, model_dim)
        self.dropout = nn.Dropout(dropout)
        self.final_linear = nn.Linear(model_dim, model_dim)

    def forward(self, key, value, query, mask=None):
        batch_size = key.size(0)

        def shape(x):
            return x.view(batch_size, -1, self.head_count, self.dim_per_head).transpose(1, 2)

        key = shape(self.linear_keys(key))
        value = shape(self.linear_values(value))
        query = shape(self.linear_query(query)) / math.sqrt(self.dim_per_head)
        scores = torch.matmul(query, key.transpose(2, 3))
        if mask is not None:
            scores = scores.masked_fill(mask.unsqueeze(1), -MASK_VALUE)
        attn = self.dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(attn, value).transpose(1, 2).contiguous()
        return self.final_linear(context.view(batch_size, -1, self.head_count * self.dim_per_head))
