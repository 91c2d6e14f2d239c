import torch


class Optimizer:
    """Wraps a torch optimizer; under amp it owns the GradScaler."""

    def __init__(self, optimizer, learning_rate, amp=True):
        self._optimizer = optimizer
        self.learning_rate = learning_rate
        self._scaler = torch.amp.GradScaler("cuda", enabled=amp)

    @classmethod
    def from_opt(cls, model, opt):
        optimizer = torch.optim.Adam(model.parameters(), lr=opt.learning_rate)
        return cls(optimizer, opt.learning_rate, amp=opt.amp)

    def zero_grad(self, set_to_none=True):
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def backward(self, loss):
        self._scaler.scale(loss).backward()

    def unscale_grads(self):
        self._scaler.unscale_(self._optimizer)

    def step(self):
        self._scaler.step(self._optimizer)
        self._scaler.update()
