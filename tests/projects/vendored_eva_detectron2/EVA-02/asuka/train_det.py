import torch
from torch import nn

from detectron2.engine.train_loop import AMPTrainer


class ScoreHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, feats):
        logits = self.proj(feats)
        mask = feats < 0
        return logits.masked_fill(mask, -1e9).sum()


def main(loader):
    model = ScoreHead()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = AMPTrainer(model, optimizer)
    for data in loader:
        trainer.run_step(data)
