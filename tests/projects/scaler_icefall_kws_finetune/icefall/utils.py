import torch


def create_grad_scaler(enabled=True, init_scale=1.0):
    return torch.amp.GradScaler("cuda", enabled=enabled, init_scale=init_scale)


def torch_autocast(enabled=True, dtype=torch.float16):
    return torch.amp.autocast("cuda", enabled=enabled, dtype=dtype)
