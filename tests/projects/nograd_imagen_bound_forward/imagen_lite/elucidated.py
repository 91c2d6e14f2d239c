from random import random

import torch
from torch import nn
import torch.nn.functional as F


class ElucidatedDiffusion(nn.Module):
    def __init__(self, unet, sigma_data=0.5, p_mean=-1.2, p_std=1.2):
        super().__init__()
        self.unet = unet
        self.sigma_data = sigma_data
        self.p_mean = p_mean
        self.p_std = p_std

    def scalings(self, sigma):
        total = sigma ** 2 + self.sigma_data ** 2
        return self.sigma_data ** 2 / total, sigma * self.sigma_data * total ** -0.5, total ** -0.5

    def preconditioned(self, unet_forward, noised, sigma, **kwargs):
        c_skip, c_out, c_in = (s[:, None, None, None] for s in self.scalings(sigma))
        net_out = unet_forward(c_in * noised, sigma.log() * 0.25, **kwargs)
        return c_skip * noised + c_out * net_out

    def forward(self, images):
        unet = self.unet
        sigmas = (self.p_mean + self.p_std * torch.randn(images.shape[0], device=images.device)).exp()
        noised = images + sigmas[:, None, None, None] * torch.randn_like(images)
        kwargs = {}
        if unet.self_cond and random() < 0.5:
            with torch.no_grad():
                kwargs["self_cond"] = self.preconditioned(unet.forward, noised, sigmas).detach()
        denoised = self.preconditioned(unet.forward, noised, sigmas, **kwargs)
        return F.mse_loss(denoised, images)
