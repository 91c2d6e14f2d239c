"""A `Trainer` laid out like huggingface/transformers' trainer.py: `training_step` computes the
loss under autocast and backpropagates it through the GradScaler, and the clipping and stepping
come from a mixin in optimization.py. The mixin clips before any `unscale_`, so the threshold
applies to gradients multiplied by the loss scale."""
import torch

from .callbacks import CallbackMixin
from .optimization import OptimizationMixin


class Trainer(OptimizationMixin, CallbackMixin):
    def __init__(self, model, args, optimizer, callbacks=()):
        self.model = model
        self.args = args
        self.optimizer = optimizer
        self.callbacks = list(callbacks)
        self.scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)

    def training_step(self, model, inputs):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.args.fp16):
            loss = model(**inputs).loss
        self.scaler.scale(loss).backward()
        self.clip_gradients(model)
        self.optimizer_step()
        return loss.detach()

    def train(self, loader):
        self.model.train()
        for step, inputs in enumerate(loader):
            self.training_step(self.model, inputs)
            self.on_step_end(step)
