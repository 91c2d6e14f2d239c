import torch.nn as nn
import torch.nn.functional as F


class OLMoBlock(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.ff = nn.Linear(d_model, d_model)

    def forward(self, x):
        return x + self.ff(F.gelu(self.norm(x)))


class OLMo(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList([OLMoBlock(cfg.d_model) for _ in range(cfg.n_layers)])
        self.z_head = nn.Linear(cfg.d_model, 1)

    def forward(self, input_ids):
        x = self.wte(input_ids)
        for block in self.blocks:
            x = block(x)
        return F.linear(x, self.wte.weight), self.z_head(x).squeeze(-1)
