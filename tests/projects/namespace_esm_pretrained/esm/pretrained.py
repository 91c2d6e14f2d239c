"""Laid out like facebookresearch/esm's esm/pretrained.py: one zero-argument factory per
published model, each loading its weights through load_model_and_alphabet_hub/core."""
import torch

from .model import ESM1, ESM2


def load_model_and_alphabet_core(model_name, model_data):
    cfg = model_data["cfg"]
    cls = ESM1 if model_name.startswith("esm1") else ESM2
    model = cls(num_layers=cfg["layers"], embed_dim=cfg["embed_dim"])
    model.load_state_dict(model_data["model"], strict=False)
    return model, cfg["alphabet"]


def load_model_and_alphabet_hub(model_name):
    url = f"https://dl.fbaipublicfiles.com/fair-esm/models/{model_name}.pt"
    return load_model_and_alphabet_core(model_name, torch.hub.load_state_dict_from_url(url, map_location="cpu"))


def esm1_t6_43M_UR50S():
    model = ESM1(num_layers=6, embed_dim=768)
    return model, "ESM-1"


def esm2_t6_8M_UR50D():
    model = ESM2(num_layers=6, embed_dim=320)
    return model, "ESM-1b"


def esm2_t33_650M_UR50D():
    model = ESM2(num_layers=33, embed_dim=1280)
    return model, "ESM-1b"
