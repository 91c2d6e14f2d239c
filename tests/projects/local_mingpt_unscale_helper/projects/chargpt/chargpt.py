import torch

from mingpt.trainer import Trainer


def main(config, model, batches):
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    trainer = Trainer(config, model, optimizer)
    trainer.run(batches)
