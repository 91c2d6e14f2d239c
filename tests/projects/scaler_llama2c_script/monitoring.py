"""Logging helpers for the training script."""
import torch


def grad_norm_report(model, optimizer, scaler):
    scaler.unscale_(optimizer)
    norms = [p.grad.detach().norm() for p in model.parameters() if p.grad is not None]
    return torch.stack(norms).norm().item()
