import torch
import torch.nn as nn


class LoraLinear(nn.Module):
    def __init__(self, base_layer, adapter_name, r=8, lora_alpha=16):
        super().__init__()
        self.base_layer = base_layer
        self.adapter_name = adapter_name
        self.out_features = base_layer.out_features
        self.lora_A = nn.Linear(base_layer.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base_layer.out_features, bias=False)
        self.scaling = lora_alpha / r

    def _mixed_batch_forward(self, x, adapter_names):
        result = self.base_layer(x)
        lora_out = torch.zeros(*x.shape[:-1], self.out_features, device=x.device)
        rows = [i for i, name in enumerate(adapter_names) if name == self.adapter_name]
        lora_out[rows] = self.lora_B(self.lora_A(x[rows]))
        return result + lora_out * self.scaling

    def forward(self, x, adapter_names=None):
        if adapter_names is not None:
            return self._mixed_batch_forward(x, adapter_names)
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling
