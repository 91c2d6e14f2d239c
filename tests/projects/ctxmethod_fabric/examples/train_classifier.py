import torch
import torch.nn.functional as F
from torch import nn

from minifabric.fabric import Engine


class MultiLabelNet(nn.Module):
    def __init__(self, num_labels=20):
        super().__init__()
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 256), nn.ReLU())
        self.head = nn.Linear(256, num_labels)

    def forward(self, images, targets):
        probs = torch.sigmoid(self.head(self.backbone(images)))
        return F.binary_cross_entropy(probs, targets)


def main():
    engine = Engine(precision="16-mixed")
    model = engine.setup(MultiLabelNet())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(10):
        images, targets = torch.randn(8, 3, 32, 32), torch.rand(8, 20)
        loss = model(images, targets)
        optimizer.zero_grad()
        engine.backward(loss)
        optimizer.step()


if __name__ == "__main__":
    main()
