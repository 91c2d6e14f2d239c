"""Per-layer gradient scaling through backward hooks (written for amplint's tests): not a
torch GradScaler; `step` checks the gradients itself and needs no `update()`."""

from typing import Dict

import torch


class LayerwiseGradientScaler:
    def __init__(self, model: torch.nn.Module, layer_scales: Dict[str, float]) -> None:
        self.model = model
        self.layer_scales = layer_scales
        self.handles = []

    def scale(self) -> None:
        for name, layer in self.model.named_modules():
            factor = self.layer_scales.get(name)
            if factor is not None:
                hook = lambda module, grad_in, grad_out, f=factor: tuple(g * f if g is not None else g for g in grad_in)
                self.handles.append(layer.register_full_backward_hook(hook))

    def unscale(self) -> None:
        for name, layer in self.model.named_modules():
            factor = self.layer_scales.get(name)
            if factor is not None:
                for param in layer.parameters():
                    if param.grad is not None:
                        param.grad.div_(factor)
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def step(self, optimizer) -> None:
        if all(torch.isfinite(p.grad).all() for p in self.model.parameters() if p.grad is not None):
            optimizer.step()
