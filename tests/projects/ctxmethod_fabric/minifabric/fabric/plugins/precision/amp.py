import torch

from .precision import Precision


class MixedPrecision(Precision):
    def __init__(self, precision, device):
        self.precision = precision
        self.device = device
        self.scaler = torch.amp.GradScaler(device) if precision == "16-mixed" else None

    def forward_context(self):
        return torch.autocast(self.device, dtype=torch.float16)

    def backward(self, tensor, model):
        if self.scaler is not None:
            tensor = self.scaler.scale(tensor)
        tensor.backward()
