import torch

from waveglow.model import WaveGlow


def get_model(model_config, device, fp16=False):
    model = WaveGlow(**model_config)
    if fp16:
        model = model.half()
    return model.to(device)
