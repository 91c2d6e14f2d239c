import torch
import torch.nn as nn


class ESM1(nn.Module):
    def __init__(self, num_layers=6, embed_dim=768):
        super().__init__()
        self.embed = nn.Embedding(33, embed_dim)
        self.layers = nn.ModuleList(nn.Linear(embed_dim, embed_dim) for _ in range(num_layers))

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return {"representations": x}


class ESM2(nn.Module):
    def __init__(self, num_layers=33, embed_dim=1280):
        super().__init__()
        self.padding_idx = 1
        self.embed = nn.Embedding(33, embed_dim)
        self.q = nn.Linear(embed_dim, embed_dim)
        self.k = nn.Linear(embed_dim, embed_dim)

    def forward(self, tokens):
        x = self.embed(tokens)
        scores = self.q(x) @ self.k(x).transpose(1, 2)
        scores = scores.masked_fill(tokens.eq(self.padding_idx).unsqueeze(1), -1e9)
        return {"representations": scores.softmax(-1) @ x}
