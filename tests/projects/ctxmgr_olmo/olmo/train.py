from dataclasses import dataclass
from typing import Any

import torch

from .loss import token_loss, z_gate_loss
from .torch_util import autocast_context


@dataclass
class Trainer:
    cfg: Any
    model: torch.nn.Module
    optim: torch.optim.Optimizer
    loader: Any

    def model_forward(self, batch):
        logits, z_logits = self.model(batch["input_ids"])
        loss = token_loss(logits[:, :-1], batch["input_ids"][:, 1:])
        return loss + z_gate_loss(z_logits, batch["z_target"])

    def train_batch(self, batch):
        total = 0.0
        for micro in self.split(batch):
            with autocast_context(self.cfg):
                loss = self.model_forward(micro)
            loss.backward()
            total += loss.item()
        return total

    def split(self, batch):
        size = self.cfg.microbatch_size
        n = batch["input_ids"].shape[0]
        return [{k: v[i:i + size] for k, v in batch.items()} for i in range(0, n, size)]

    def fit(self):
        for step, batch in enumerate(self.loader):
            self.optim.zero_grad(set_to_none=True)
            self.train_batch(batch)
            self.optim.step()
            if step >= self.cfg.max_steps:
                break
