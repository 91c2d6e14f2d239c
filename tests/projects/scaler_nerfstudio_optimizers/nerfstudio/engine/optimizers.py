"""Optimizers of a radiance-field trainer, one per parameter group (written for amplint's tests)."""

from typing import Dict, List

import torch
from torch.amp import GradScaler


class Optimizers:
    def __init__(self, config: Dict[str, dict], param_groups: Dict[str, List[torch.nn.Parameter]]):
        self.config = config
        self.parameters = param_groups
        self.optimizers = {
            name: torch.optim.Adam(params, lr=config[name]["lr"]) for name, params in param_groups.items()
        }

    def zero_grad_all(self) -> None:
        for optimizer in self.optimizers.values():
            optimizer.zero_grad()

    def scaler_step_all(self, grad_scaler: GradScaler) -> None:
        for group, optimizer in self.optimizers.items():
            max_norm = self.config[group].get("max_norm")
            if max_norm is not None:
                grad_scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(self.parameters[group], max_norm)
            grad_scaler.step(optimizer)

    def scaler_step_some(self, grad_scaler: GradScaler, groups: List[str]) -> None:
        for group in groups:
            optimizer = self.optimizers[group]
            if any(p.grad is not None for p in self.parameters[group]):
                grad_scaler.step(optimizer=optimizer)
