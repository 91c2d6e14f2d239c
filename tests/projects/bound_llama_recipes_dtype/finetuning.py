import torch

from llama_recipes.utils.train_utils import Trainer


def main(model, loader, train_config):
    optimizer = torch.optim.AdamW(model.parameters(), lr=train_config.lr)
    trainer = Trainer(model, optimizer, train_config)
    for batch in loader:
        trainer.train_step(batch)
