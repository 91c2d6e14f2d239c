import torch

from .rcnn import GeneralizedRCNN


def build_model(cfg):
    model = GeneralizedRCNN(cfg)
    model.to(torch.device(cfg.MODEL.DEVICE))
    return model
