"""The training loop of a radiance-field trainer (written for amplint's tests)."""

import torch
from torch.amp import GradScaler

from nerfstudio.engine.optimizers import Optimizers


class Trainer:
    def __init__(self, model, config, accumulate=None):
        self.model = model
        self.accumulate = accumulate or {}
        self.optimizers = Optimizers(config, {"fields": list(model.parameters())})
        self.grad_scaler = GradScaler("cuda", enabled=True)

    def train_iteration(self, batch, step: int):
        self.optimizers.zero_grad_all()
        with torch.autocast(device_type="cuda", enabled=True):
            loss = self.model(batch).sum()
        self.grad_scaler.scale(loss).backward()
        self.optimizers.scaler_step_all(self.grad_scaler)
        self.grad_scaler.update()
        return loss

    def train_iteration_some(self, batch, step: int):
        self.optimizers.zero_grad_all()
        with torch.autocast(device_type="cuda", enabled=True):
            loss = self.model(batch).sum()
        self.grad_scaler.scale(loss).backward()
        due = [g for g, every in self.accumulate.items() if step % every == every - 1]
        self.optimizers.scaler_step_some(self.grad_scaler, due)
        self.grad_scaler.update()
        return loss

    def train(self, batches):
        for step, batch in enumerate(batches):
            if self.accumulate:
                self.train_iteration_some(batch, step)
            else:
                self.train_iteration(batch, step)
