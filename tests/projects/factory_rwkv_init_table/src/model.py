import math

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.key = nn.Linear(dim, dim, bias=False)
        self.value = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        return x + self.value(torch.relu(self.key(self.ln(x))) ** 2)


class RWKV(nn.Module):
    def __init__(self, dim=32, layers=2):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))
        self.head = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)

    def count_init_params(self):
        table = {}
        total = 0
        for name, param in self.state_dict().items():
            if param.dim() < 2:
                table[name] = param
            else:
                gain = math.sqrt(param.shape[0] / param.shape[1])
                table[name] = torch.empty((param.shape[0], param.shape[1]), device=param.device)
                if "value" in name:
                    nn.init.zeros_(table[name])
                else:
                    nn.init.orthogonal_(table[name], gain=gain)
                table[name] = table[name].cpu()
            total += table[name].numel()
        print("init params", total)
