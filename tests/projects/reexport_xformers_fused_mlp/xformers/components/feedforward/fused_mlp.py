import torch
import torch.nn as nn

from xformers.components.feedforward import register_feedforward
from xformers.ops import fused_linear_gelu


@register_feedforward("FusedMLP")
class FusedMLP(nn.Module):
    def __init__(self, dim_model, hidden_layer_multiplier=4):
        super().__init__()
        hidden = hidden_layer_multiplier * dim_model
        self.weight = nn.Parameter(torch.randn(hidden, dim_model) * dim_model ** -0.5)
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.proj = nn.Linear(hidden, dim_model)

    def forward(self, inputs):
        return self.proj(fused_linear_gelu(inputs, self.weight, self.bias))
