import torch
import torch.nn as nn


class TemporalBlock(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size)
        self.proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        return x + self.proj(self.norm(x))


class Latte(nn.Module):
    def __init__(self, in_channels=4, hidden_size=64, depth=2, num_frames=16, learn_sigma=True):
        super().__init__()
        self.out_channels = in_channels * 2 if learn_sigma else in_channels
        self.x_embedder = nn.Linear(in_channels, hidden_size)
        self.temp_embed = nn.Parameter(torch.zeros(1, num_frames, hidden_size), requires_grad=False)
        self.blocks = nn.ModuleList([TemporalBlock(hidden_size) for _ in range(depth)])
        self.final_layer = nn.Linear(hidden_size, self.out_channels)

    def forward(self, x, t):
        h = self.x_embedder(x) + self.temp_embed
        for block in self.blocks:
            h = block(h)
        return self.final_layer(h)


def Latte_S_2(**kwargs):
    return Latte(hidden_size=64, depth=2, **kwargs)


def Latte_XL_2(**kwargs):
    return Latte(hidden_size=256, depth=4, **kwargs)


Latte_models = {"Latte-S/2": Latte_S_2, "Latte-XL/2": Latte_XL_2}
