"""One optimizer per sub-network behind one object, stepped by key (written for amplint's tests)."""

import torch
from torch.optim import AdamW


class MultiOptimizer:
    def __init__(self, optimizers, scaler):
        self.optimizers = optimizers
        self.keys = list(optimizers.keys())
        self.scaler = scaler

    def zero_grad(self, key=None):
        for k in [key] if key is not None else self.keys:
            self.optimizers[k].zero_grad()

    def step(self, key=None):
        keys = self.keys if key is None else [key]
        for k in keys:
            self.scaler.step(self.optimizers[k])
            self.scaler.update()


def build_optimizer(parameters, lr=1e-4):
    optimizers = {key: AdamW(params, lr=lr, betas=(0.0, 0.99)) for key, params in parameters.items()}
    return MultiOptimizer(optimizers, torch.amp.GradScaler("cuda"))
