import os

import torch


def select_device(device="", batch_size=0):
    cpu = device.lower() == "cpu"
    if cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
    elif device:
        os.environ["CUDA_VISIBLE_DEVICES"] = device
    if not cpu and torch.cuda.is_available():
        devices = device.split(",") if device else "0"
        if batch_size:
            assert batch_size % len(devices) == 0, f"batch-size {batch_size} not multiple of GPU count {len(devices)}"
        return torch.device("cuda:0")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def device_name(device=""):
    return "cpu" if device.lower() == "cpu" else "cuda"


def smart_optimizer(model, lr=0.01, momentum=0.937):
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, nesterov=True)
