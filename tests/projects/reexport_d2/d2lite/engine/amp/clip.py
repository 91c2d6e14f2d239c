import torch


def clip_and_step(scaler, optimizer, params, max_norm):
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    scaler.step(optimizer)


class AMPStepper:
    def __init__(self, scaler):
        self.scaler = scaler
