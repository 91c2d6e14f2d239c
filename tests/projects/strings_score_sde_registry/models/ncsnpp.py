import torch
import torch.nn as nn

from . import utils


class AttnBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.qkv = nn.Conv2d(channels, 3 * channels, 1)
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x, keep):
        b, c, h, w = x.shape
        q, k, v = self.qkv(x).reshape(b, 3, c, h * w).unbind(1)
        w_ = torch.einsum("bci,bcj->bij", q, k) * (c ** -0.5)
        w_ = w_.masked_fill(~keep[:, None, :], -1e9)
        h_ = torch.einsum("bij,bcj->bci", w_.softmax(-1), v).reshape(b, c, h, w)
        return x + self.proj(h_)


@utils.register_model(name="ncsnpp")
class NCSNpp(nn.Module):
    def __init__(self, config):
        super().__init__()
        nf = config.model.nf
        self.conv_in = nn.Conv2d(config.data.num_channels, nf, 3, padding=1)
        self.attn = AttnBlock(nf)
        self.conv_out = nn.Conv2d(nf, config.data.num_channels, 3, padding=1)

    def forward(self, x, time_cond):
        h = self.conv_in(x) * time_cond[:, None, None, None]
        keep = torch.ones(h.shape[0], h.shape[2] * h.shape[3], dtype=torch.bool, device=h.device)
        return self.conv_out(self.attn(h, keep))
