import torch
import torch.nn.functional as F
from torch import nn


class BoringModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(32, 2)

    def forward(self, x):
        prob = torch.sigmoid(self.layer(x))
        return F.binary_cross_entropy(prob, torch.ones_like(prob))
