"""The trainer picks the closure scaler exactly when the optimizers take closures."""

import torch
from torch.amp import GradScaler

from composer.trainer._scaler import ClosureGradScaler


class Trainer:
    def __init__(self, model, optimizers, use_closures):
        self.model = model
        self.optimizers = optimizers
        self.use_closures = use_closures
        self.scaler = ClosureGradScaler() if use_closures else GradScaler("cuda")

    def _train_batch(self, batch):
        if self.use_closures:
            for optimizer in self.optimizers:
                self.scaler.step(optimizer, closure=lambda **kwargs: self._train_microbatch(batch))
        else:
            self._train_microbatch(batch)
            for optimizer in self.optimizers:
                self.scaler.step(optimizer)

    def fit(self, loader):
        for batch in loader:
            self._train_batch(batch)
            self.scaler.update()

    def _train_microbatch(self, batch):
        with torch.autocast("cuda"):
            loss = self.model(batch).sum()
        self.scaler.scale(loss).backward()
        return loss
