import torch
import torch.nn as nn
from mmengine.model import BaseModule

from mmagic.registry import MODELS


@MODELS.register_module()
class PGGANGenerator(BaseModule):

    def __init__(self, noise_size, out_channels=3):
        super().__init__()
        self.noise_size = noise_size
        self.noise2feat = nn.Linear(noise_size + 10, 512)
        self.label_proj = nn.Linear(10, 10)
        self.torgb = nn.Linear(512, out_channels)

    def forward(self, noise, label=None, num_batches=0):
        if isinstance(noise, torch.Tensor):
            noise_batch = noise
        elif callable(noise):
            noise_generator = noise
            noise_batch = noise_generator((num_batches, self.noise_size))
        else:
            noise_batch = torch.randn((num_batches, self.noise_size))

        noise_batch = noise_batch.to(self.noise2feat.weight.device)

        if label is not None:
            noise_batch = torch.cat([noise_batch, label.to(noise_batch)], dim=1)

        x = self.noise2feat(noise_batch)
        return self.torgb(x)
