import torch


class Trainer:
    def __init__(self, model, optimizer, criterion, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.criterion = criterion
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, x, mask, y):
        with torch.autocast("cuda", dtype=torch.float16):
            logits = self.model(x, mask)
            loss = self.criterion(logits, y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss.item()

    def fit(self, loader, epochs):
        for _ in range(epochs):
            for x, mask, y in loader:
                self.step(x, mask, y)
