import torch.nn as nn

from . import utils


@utils.register_model(name="ddpm")
class DDPM(nn.Module):
    def __init__(self, config):
        super().__init__()
        nf = config.model.nf
        self.net = nn.Sequential(nn.Conv2d(config.data.num_channels, nf, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(nf, config.data.num_channels, 3, padding=1))

    def forward(self, x, time_cond):
        return self.net(x) * time_cond[:, None, None, None]
