"""The engine that wraps the user's model: device placement, fp16, the optimizer step."""
import torch
from torch.nn.modules import Module


class DeepSpeedEngine(Module):
    def __init__(self, model, config, optimizer=None):
        super().__init__()
        self.config = config
        self.module = model
        self.module.to(torch.device("cuda", config.local_rank))
        if config.fp16_enabled:
            self.module.half()
        self.optimizer = optimizer
        self.global_steps = 0

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.global_steps += 1
