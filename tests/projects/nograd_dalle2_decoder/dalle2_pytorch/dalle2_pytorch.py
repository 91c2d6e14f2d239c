import random

import torch
from torch import nn


class Unet(nn.Module):
    def __init__(self, dim, self_cond=True):
        super().__init__()
        self.self_cond = self_cond
        self.proj = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, x, times, self_cond=None):
        return self.proj(x)


class Decoder(nn.Module):
    def __init__(self, unet):
        super().__init__()
        self.unets = nn.ModuleList([unet])

    def parse_unet_output(self, learned_variance, output):
        if learned_variance:
            output, _ = output.chunk(2, dim=1)
        return output

    def p_losses(self, unet, x_start, times, learned_variance=False):
        noise = torch.randn_like(x_start)
        x_noisy = x_start + noise
        self_cond = None
        if unet.self_cond and random.random() < 0.5:
            with torch.no_grad():
                unet_output = unet(x_noisy, times)
                self_cond = self.parse_unet_output(learned_variance, unet_output)
                self_cond = self_cond.detach()
        unet_output = unet(x_noisy, times, self_cond=self_cond)
        pred = self.parse_unet_output(learned_variance, unet_output)
        return nn.functional.mse_loss(pred, noise)

    def forward(self, image, times):
        return self.p_losses(self.unets[0], image, times)
