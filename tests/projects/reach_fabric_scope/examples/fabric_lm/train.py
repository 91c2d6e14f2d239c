import lightning as L
import torch

from demos import Transformer


def main(loader):
    fabric = L.Fabric(accelerator="cuda", devices=1, precision="32-true")
    with fabric.init_module():
        model = Transformer(vocab=128)
    model = fabric.setup(model)
    optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
    for tokens, mask, target in loader:
        loss = torch.nn.functional.cross_entropy(model(tokens, mask).flatten(0, 1), target.flatten())
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
