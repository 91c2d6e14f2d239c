"""Laid out like a lucidrains-style perceiver repository: the pooler builds its attention
module and calls it in one expression, under its own autocast region."""
import torch

from models import PerceiverPooler

pooler = PerceiverPooler(64).cuda()
tokens = torch.randn(2, 16, 64, device="cuda")
mask = torch.ones(2, 16, dtype=torch.bool, device="cuda")
print(pooler(tokens, mask).shape)
