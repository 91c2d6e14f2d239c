import math

import torch
import torch.nn as nn


class SinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, embed_dim, padding_idx):
        super().__init__()
        self.embed_dim = embed_dim
        self.padding_idx = padding_idx
        self.register_buffer("_float_tensor", torch.FloatTensor(1))
        self.weights = None

    def forward(self, tokens):
        bsz, seq_len = tokens.shape
        max_pos = self.padding_idx + 1 + seq_len
        if self.weights is None or max_pos > self.weights.size(0):
            self.weights = self.get_embedding(max_pos)
        self.weights = self.weights.type_as(self._float_tensor)
        positions = tokens.ne(self.padding_idx).long().cumsum(1) + self.padding_idx
        return self.weights.index_select(0, positions.view(-1)).view(bsz, seq_len, -1).detach()

    def get_embedding(self, num_embeddings):
        half_dim = self.embed_dim // 2
        scale = math.log(10000) / (half_dim - 1)
        freqs = torch.exp(torch.arange(half_dim, dtype=torch.float) * -scale)
        angles = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * freqs.unsqueeze(0)
        table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
        if self.embed_dim % 2 == 1:
            table = torch.cat([table, torch.zeros(num_embeddings, 1)], dim=1)
        if self.padding_idx is not None:
            table[self.padding_idx, :] = 0
        return table
