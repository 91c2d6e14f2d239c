"""Simple training loop; the batch step is a closure so that the AMP and fp32 paths share it."""
from collections import defaultdict

import torch


class Trainer:
    def __init__(self, step_fn, train_loader, max_iters):
        self.step_fn = step_fn
        self.train_loader = train_loader
        self.max_iters = max_iters
        self.callbacks = defaultdict(list)
        self.iter_num = 0
        self.loss = None

    def add_callback(self, onevent, callback):
        self.callbacks[onevent].append(callback)

    def trigger_callbacks(self, onevent):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def run(self):
        while self.iter_num < self.max_iters:
            for batch in self.train_loader:
                self.loss = self.step_fn(batch)
                self.trigger_callbacks("on_batch_end")
                self.iter_num += 1


def _make_step(model, optimizer, scaler, grad_norm_clip):
    def step(batch):
        x, y = batch
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            _, loss = model(x, y)
        model.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm_clip)
        scaler.step(optimizer)
        return loss

    return step


def build_trainer(model, train_loader, learning_rate=5e-4, max_iters=100, amp=True):
    optimizer = model.configure_optimizers(learning_rate)
    scaler = torch.amp.GradScaler("cuda", enabled=amp)
    trainer = Trainer(_make_step(model, optimizer, scaler, 1.0), train_loader, max_iters)
    trainer.add_callback("on_batch_end", lambda trainer: scaler.update())
    return trainer
