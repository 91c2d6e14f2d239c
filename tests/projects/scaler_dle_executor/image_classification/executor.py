import torch
import torch.nn as nn


class Executor:
    """The forward and backward of one batch (moved out of training.py in this fork)."""

    def __init__(self, model: nn.Module, loss: nn.Module, amp: bool = False, scaler=None, divide_loss: int = 1):
        self.model = model
        self.loss = loss
        self.amp = amp
        self.scaler = scaler
        self.divide_loss = divide_loss

    def forward(self, input, target):
        with torch.no_grad(), torch.autocast("cuda", enabled=self.amp):
            output = self.model(input)
            loss = self.loss(output, target)
        return loss, output

    def forward_backward(self, input, target):
        with torch.autocast("cuda", enabled=self.amp):
            output = self.model(input)
            loss = self.loss(output, target)
            loss /= self.divide_loss
        loss.backward()
        return loss, output
