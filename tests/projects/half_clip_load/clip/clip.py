import os

import torch

from .model import build_model

_MODELS = {"ViT-B/32": "ViT-B-32.pt", "RN50": "RN50.pt"}


def load(name, device="cuda", half=True, download_root=None):
    model_path = os.path.join(download_root or os.path.expanduser("~/.cache/clip"), _MODELS[name])
    state_dict = torch.load(model_path, map_location="cpu")
    model = build_model(state_dict)
    if half:
        model.half()
    return model.to(device)


def tokenize(texts, context_length=77):
    result = torch.zeros(len(texts), context_length, dtype=torch.long)
    for i, text in enumerate(texts):
        tokens = [ord(c) % 49408 for c in text][:context_length]
        result[i, :len(tokens)] = torch.tensor(tokens)
    return result
