import torch


class ClassyTask:
    """The state of a training run: model, optimizer, loss and the loss-scaling state."""

    def __init__(self, model, loss, optimizer, amp_enabled=False):
        self.base_model = model
        self.base_loss = loss
        self.optimizer = optimizer
        self.amp_enabled = amp_enabled
        self.amp_grad_scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)
        self.losses = []

    def backward(self, loss):
        """The backward pass, in float32 whatever region the caller runs in."""
        with torch.autocast("cuda", enabled=False):
            self.amp_grad_scaler.scale(loss).backward()

    def step_optimizer(self):
        self.amp_grad_scaler.step(self.optimizer)
        self.amp_grad_scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
