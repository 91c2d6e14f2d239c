import torch

from llama_recipes.utils.config_utils import get_autocast_dtype


class Trainer:
    def __init__(self, model, optimizer, train_config):
        self.model = model
        self.optimizer = optimizer
        self.autocast_dtype = get_autocast_dtype(train_config)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=self.autocast_dtype):
            loss = self.model(**batch).loss
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss.detach()
