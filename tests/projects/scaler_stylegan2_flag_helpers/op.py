"""Gradient statistics the training loop logs (on unscaled gradients)."""

import torch


def grad_norm(model):
    return torch.norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
