import torch as th
import torch.nn as nn


class MaskedCrossAttention(nn.Module):
    def __init__(self, channels, context_dim):
        super().__init__()
        self.q = nn.Linear(channels, channels)
        self.kv = nn.Linear(context_dim, channels * 2)

    def forward(self, x, context, context_mask):
        q = self.q(x)
        k, v = self.kv(context).chunk(2, dim=-1)
        weight = th.bmm(q, k.transpose(1, 2))
        weight = weight.masked_fill(~context_mask[:, None, :], -1e9)
        return th.bmm(weight.softmax(-1), v)
