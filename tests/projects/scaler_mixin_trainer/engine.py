"""A hand-written trainer with mixins, laid out like small research trainers built on the
shape of Hugging Face transformers' `Trainer` (huggingface/transformers, trainer.py: a `Trainer`
class whose `training_step` scales and backpropagates, helpers for clipping and stepping, and
hooks called from the epoch loop). The mixins live beside the trainer in this file."""
import torch


class ClipMixin:
    def clip_if_needed(self):
        if self.max_grad_norm:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)


class HookMixin:
    def on_epoch_end(self, epoch):
        self.scaler.update()
        self.log(epoch)

    def log(self, epoch):
        print(epoch)


class Trainer(ClipMixin, HookMixin):
    def __init__(self, model, optimizer, max_grad_norm=1.0, fp16=True):
        self.model = model
        self.optimizer = optimizer
        self.max_grad_norm = max_grad_norm
        self.scaler = torch.amp.GradScaler("cuda", enabled=fp16)

    def training_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(**batch).loss
        self.scaler.scale(loss).backward()
        self.clip_if_needed()
        self.scaler.step(self.optimizer)
        self.optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for batch in loader:
                self.training_step(batch)
            self.on_epoch_end(epoch)
