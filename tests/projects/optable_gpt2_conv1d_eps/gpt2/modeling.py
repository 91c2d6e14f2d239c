import torch
from torch import nn


class Conv1D(nn.Module):
    """A linear layer with transposed weights, as GPT-2's checkpoints store them."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2ValueHead(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = Conv1D(n_embd, n_embd)
        self.c_proj = Conv1D(1, n_embd)

    def forward(self, hidden_states):
        h = torch.tanh(self.c_fc(hidden_states))
        probs = torch.sigmoid(self.c_proj(h)).clamp(min=1e-8)
        return probs.log()
