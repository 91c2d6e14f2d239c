import torch

from detectron2.engine import AMPTrainer


def main(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    trainer = AMPTrainer(model, loader, optimizer)
    for _ in range(10):
        trainer.run_step()
