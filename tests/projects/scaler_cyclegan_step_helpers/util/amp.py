"""Mixed-precision helpers shared by the models."""
import torch


def make_scaler(opt):
    return torch.amp.GradScaler("cuda", enabled=opt.amp)


def step_and_update(scaler, optimizer):
    """Step one optimizer through the scaler and adjust the loss scale."""
    scaler.step(optimizer)
    scaler.update()
