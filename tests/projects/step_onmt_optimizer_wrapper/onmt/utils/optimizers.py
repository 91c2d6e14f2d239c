import torch
from torch.nn.utils import clip_grad_norm_


class Optimizer(object):
    """Wraps a torch optimizer with the learning-rate decay, clipping and loss scaling."""

    def __init__(self, optimizer, learning_rate, max_grad_norm=0.0, use_amp=False):
        self._optimizer = optimizer
        self._learning_rate = learning_rate
        self._max_grad_norm = max_grad_norm
        self._training_step = 1
        self.amp = use_amp
        if use_amp:
            self._scaler = torch.amp.GradScaler("cuda")

    @classmethod
    def from_opt(cls, model, opt):
        adam = torch.optim.Adam(model.parameters(), lr=opt.learning_rate)
        return cls(adam, opt.learning_rate, opt.max_grad_norm, use_amp=opt.model_dtype == "fp16")

    def zero_grad(self, set_to_none=True):
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def backward(self, loss):
        if self.amp:
            self._scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self):
        if self.amp:
            self._scaler.unscale_(self._optimizer)
        for group in self._optimizer.param_groups:
            group["lr"] = self._learning_rate
            if self._max_grad_norm > 0:
                clip_grad_norm_(group["params"], self._max_grad_norm)
        if self.amp:
            self._scaler.step(self._optimizer)
            self._scaler.update()
        else:
            self._optimizer.step()
        self._training_step += 1
