import torch


class Trainer:
    """The training loop of train.py, kept in a class by the fork."""

    def __init__(self, model, optimizer, device_type="cuda", ptdtype=torch.float16, grad_clip=1.0):
        self.model = model
        self.optimizer = optimizer
        self.device_type = device_type
        self.ptdtype = ptdtype
        self.grad_clip = grad_clip
        self.scaler = torch.amp.GradScaler(device_type)

    def step(self, X, Y):
        with torch.autocast(device_type="cuda", dtype=self.ptdtype):
            logits, loss = self.model(X, Y)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.item()
