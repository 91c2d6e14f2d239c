import torch
from lightning.fabric import Fabric

from tests.helpers.boring import BoringModel


def test_fabric_mixed_precision():
    fabric = Fabric(accelerator="cuda", devices=1, precision=16)
    model = BoringModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    loss = model(torch.randn(4, 32, device=fabric.device))
    fabric.backward(loss)
    optimizer.step()
