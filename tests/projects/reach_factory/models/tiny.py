from torch import nn


class TinyNet(nn.Module):
    def __init__(self, dim=32, num_classes=4):
        super().__init__()
        self.fc = nn.Linear(dim, num_classes)

    def forward(self, x, mask):
        return self.fc(x) * mask[..., None]
