import torch

from .video_model_builder import SlowOnly


def build_model(cfg):
    model = SlowOnly(cfg)
    if cfg["NUM_GPUS"]:
        model = model.cuda(device=torch.cuda.current_device())
    return model
