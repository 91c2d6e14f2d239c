from typing import Union

import torch

from .model import build_model

_MODELS = {
    "tiny": {"embed_dim": 8, "vocab_size": 32, "width": 16, "patch_size": 4},
}


def available_models():
    return list(_MODELS)


def _preprocess(image):
    return (image - 0.5) / 0.25


def load(name: str, device: Union[str, torch.device] = "cuda"):
    model = build_model(_MODELS[name]).to(device)
    if str(device) == "cpu":
        model.float()
    return model, _preprocess
