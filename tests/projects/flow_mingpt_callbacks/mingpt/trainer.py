import time
from collections import defaultdict

import torch


class Trainer:
    def __init__(self, config, model, train_loader):
        self.config = config
        self.model = model
        self.train_loader = train_loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
        self.scaler = torch.amp.GradScaler("cuda")
        self.callbacks = defaultdict(list)
        self.iter_num = 0
        self.iter_time = 0.0

    def add_callback(self, onevent, callback):
        self.callbacks[onevent].append(callback)

    def set_callback(self, onevent, callback):
        self.callbacks[onevent] = [callback]

    def trigger_callbacks(self, onevent):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def run(self):
        for x, y in self.train_loader:
            with torch.autocast("cuda", dtype=torch.float16):
                self.logits, self.loss = self.model(x, y)
                self.targets = y
                self.trigger_callbacks("on_batch_loss")
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(self.loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.iter_num += 1
            self.iter_time = time.time()
