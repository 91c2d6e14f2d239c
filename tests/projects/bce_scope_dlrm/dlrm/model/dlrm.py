import torch
from torch import nn


class Dlrm(nn.Module):
    def __init__(self, num_features, hidden):
        super().__init__()
        self.bottom = nn.Linear(num_features, hidden)
        self.top = nn.Linear(hidden, 1)

    def forward(self, numerical_features):
        return self.top(torch.relu(self.bottom(numerical_features)))
