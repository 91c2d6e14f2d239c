"""A minimal training loop, mixed precision on CUDA."""
import torch
from torch.utils.data.dataloader import DataLoader


class Trainer:
    def __init__(self, model, train_dataset, batch_size=64, learning_rate=5e-4, max_iters=2000):
        self.model = model.cuda()
        self.train_dataset = train_dataset
        self.batch_size = batch_size
        self.max_iters = max_iters
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
        self.scaler = torch.amp.GradScaler("cuda")

    def run(self):
        loader = DataLoader(self.train_dataset, batch_size=self.batch_size, shuffle=True)
        self.model.train()
        for it, (x, y) in enumerate(loader):
            x, y = x.cuda(), y.cuda()
            with torch.autocast("cuda", dtype=torch.float16):
                logits, loss = self.model(x, y)
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            if it >= self.max_iters:
                break
