"""Optimizer helpers (Swin-Transformer layout: utils.py next to main.py)."""

import torch


def clip_and_step(model, optimizer, scaler, max_norm):
    """Clip, then step through the scaler and update it; the caller has unscaled."""
    if max_norm > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
