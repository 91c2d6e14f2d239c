"""The trainer: a fit loop over batches, each batch split into microbatches, every optimizer
stepped once per batch and the loss scaler updated after the batch."""

from typing import cast

import torch
from torch.amp import GradScaler


class Trainer:
    def __init__(self, model, optimizers, precision="amp_fp16"):
        self.model = model
        self.optimizers = list(optimizers)
        self.precision = precision
        self.scaler = GradScaler()

    def _use_grad_scaling(self):
        return self.precision == "amp_fp16"

    def fit(self, dataloader):
        use_grad_scaling = self._use_grad_scaling()
        for batch in dataloader:
            self._train_batch(batch, use_grad_scaling)
            if use_grad_scaling:
                self.scaler.update()

    def _train_batch(self, batch, use_grad_scaling):
        self._train_microbatches(batch.split(4), use_grad_scaling)
        for optimizer in self.optimizers:
            if use_grad_scaling:
                self.scaler.step(optimizer)
            else:
                optimizer.step()

    def _train_microbatches(self, microbatches, use_grad_scaling):
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=True)
        for microbatch in microbatches:
            self._train_microbatch(microbatch, use_grad_scaling, len(microbatches))

    def _train_microbatch(self, microbatch, use_grad_scaling, count):
        with torch.autocast("cuda", enabled=self.precision == "amp_fp16"):
            loss = self.model(microbatch).mean()
        if use_grad_scaling:
            loss = cast(torch.Tensor, self.scaler.scale(loss))
        loss.mul_(1.0 / count)
        loss.backward()
