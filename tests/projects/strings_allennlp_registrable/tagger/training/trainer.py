import torch


class Trainer:
    def __init__(self, model, optimizer, loader, num_epochs=10, use_amp=True):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.num_epochs = num_epochs
        self.use_amp = use_amp
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def train_epoch(self):
        for batch in self.loader:
            self.optimizer.zero_grad()
            with torch.autocast("cuda", enabled=self.use_amp):
                loss = self.model(**batch)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def train(self):
        for _ in range(self.num_epochs):
            self.train_epoch()
