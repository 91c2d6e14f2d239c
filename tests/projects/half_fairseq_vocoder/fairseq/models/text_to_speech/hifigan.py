import torch
import torch.nn as nn
import torch.nn.functional as F

LRELU_SLOPE = 0.1


class Generator(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.conv_pre = nn.Conv1d(cfg["model_in_dim"], cfg["upsample_initial_channel"], 7, padding=3)
        self.conv_post = nn.Conv1d(cfg["upsample_initial_channel"], 1, 7, padding=3)

    def loudness(self, x):
        return (x * x).sum(dim=-1).sqrt()

    def forward(self, x):
        x = self.conv_pre(x)
        x = F.leaky_relu(x, LRELU_SLOPE)
        x = x / (x.abs().amax(dim=-1, keepdim=True) + 1e-8)
        x = self.conv_post(x)
        return torch.tanh(x)
