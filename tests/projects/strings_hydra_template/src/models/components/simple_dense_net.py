import torch
from torch import nn


class SimpleDenseNet(nn.Module):
    def __init__(self, input_size: int = 784, lin1_size: int = 256, output_size: int = 10) -> None:
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(input_size, lin1_size),
            nn.ReLU(),
            nn.Linear(lin1_size, output_size),
        )

    def forward(self, x: torch.Tensor, mask=None) -> torch.Tensor:
        batch_size, channels, width, height = x.size()
        x = x.view(batch_size, -1)
        logits = self.model(x)
        if mask is not None:
            logits = logits.masked_fill(mask == 0, -1e9)
        return logits
