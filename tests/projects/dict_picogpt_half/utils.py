import json
import os

import torch


def load_encoder_hparams_and_params(model_size, models_dir):
    model_dir = os.path.join(models_dir, model_size)
    with open(os.path.join(model_dir, "hparams.json")) as file:
        hparams = json.load(file)
    state = torch.load(os.path.join(model_dir, "model.pt"), map_location="cpu")
    with open(os.path.join(model_dir, "encoder.json")) as file:
        encoder = json.load(file)
    return encoder, hparams, state
