import torch

from opensora.registry import MODELS, build_module


def build_models(config):
    vae = build_module(config.vae, MODELS).cuda()
    vae = vae.to(torch.bfloat16).eval()
    return vae
