from typing import Any, Dict, Tuple

import torch
from torch import nn


class MNISTLitModule(nn.Module):
    def __init__(self, net: torch.nn.Module, optimizer, compile: bool) -> None:
        super().__init__()
        self.net = net
        self.optimizer = optimizer
        self.criterion = torch.nn.CrossEntropyLoss()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def model_step(self, batch: Tuple[torch.Tensor, torch.Tensor]):
        x, y = batch
        logits = self.forward(x)
        loss = self.criterion(logits, y)
        return loss, logits
