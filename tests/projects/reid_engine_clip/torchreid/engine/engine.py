import time

import torch


class Engine:
    """The base engine: the epoch loop, the optimizer step and the bookkeeping; subclasses
    define forward_backward for their loss."""

    def __init__(self, datamanager, use_gpu=True, max_grad_norm=10.0):
        self.datamanager = datamanager
        self.train_loader = datamanager.train_loader
        self.use_gpu = torch.cuda.is_available() and use_gpu
        self.max_grad_norm = max_grad_norm
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.use_gpu)
        self.epoch = 0
        self._models = {}
        self._optims = {}

    def register_model(self, name="model", model=None, optim=None):
        self._models[name] = model
        self._optims[name] = optim

    def clip_and_step(self, names=None):
        names = names or list(self._optims)
        for name in names:
            torch.nn.utils.clip_grad_norm_(self._models[name].parameters(), self.max_grad_norm)
            self.scaler.step(self._optims[name])
        self.scaler.update()

    def train(self, print_freq=10):
        self.set_model_mode("train")
        end = time.time()
        for batch_idx, data in enumerate(self.train_loader):
            loss_summary = self.forward_backward(data)
            if (batch_idx + 1) % print_freq == 0:
                print(f"epoch {self.epoch} batch {batch_idx + 1} {loss_summary} {time.time() - end:.3f}s")
            end = time.time()

    def set_model_mode(self, mode="train"):
        for model in self._models.values():
            model.train() if mode == "train" else model.eval()

    def forward_backward(self, data):
        raise NotImplementedError
