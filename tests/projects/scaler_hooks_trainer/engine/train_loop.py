"""A detectron2-style training loop (facebookresearch/detectron2 engine/train_loop.py:
`TrainerBase.train` runs `run_step` per iteration and the hooks around it; `AMPTrainer.run_step`
scales, backpropagates and steps). Here the scaler's update comes from the hooks mixin in
hooks.py, and the loop calls it once, after the iterations: the second `scaler.step` raises."""
import torch

from .hooks import StepHooksMixin


class AMPTrainer(StepHooksMixin):
    def __init__(self, model, data_loader, optimizer):
        self.model = model
        self.data_loader = data_loader
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.storage = []

    def run_step(self):
        data = next(self._data_loader_iter)
        with torch.autocast("cuda", dtype=torch.float16):
            losses = sum(self.model(data).values())
        self.optimizer.zero_grad()
        self.scaler.scale(losses).backward()
        self.scaler.step(self.optimizer)

    def train(self, start_iter, max_iter):
        self._data_loader_iter = iter(self.data_loader)
        for self.iter in range(start_iter, max_iter):
            self.run_step()
        self.after_step()
