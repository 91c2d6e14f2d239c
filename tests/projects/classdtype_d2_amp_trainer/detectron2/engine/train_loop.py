import time

import torch
from torch.amp import autocast


class SimpleTrainer:
    def __init__(self, model, data_loader, optimizer):
        model.train()
        self.model = model
        self.data_loader = data_loader
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer
        self.iter = 0

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.run_step()


class AMPTrainer(SimpleTrainer):
    """Like SimpleTrainer, with the forward under autocast in `precision` and a loss scaler."""

    precision = torch.float16

    def __init__(self, model, data_loader, optimizer, log_period=20):
        super().__init__(model, data_loader, optimizer)
        self.grad_scaler = torch.amp.GradScaler("cuda")
        self.log_period = log_period

    def run_step(self):
        assert self.model.training, "[AMPTrainer] model was changed to eval mode!"
        start = time.perf_counter()
        data = next(self._data_loader_iter)
        data_time = time.perf_counter() - start
        with autocast("cuda", dtype=self.precision):
            loss_dict = self.model(data)
            losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        self.grad_scaler.scale(losses).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
        if self.iter % self.log_period == 0:
            print(f"iter {self.iter}: loss {losses.item():.4f}, data {data_time:.3f}s")
