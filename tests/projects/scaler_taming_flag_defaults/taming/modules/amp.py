import torch


class AmpMixin:
    """The fork's AMP bookkeeping, shared by the first and second stage models."""

    def setup_amp(self, enabled=True):
        self.scaler = torch.amp.GradScaler("cuda", enabled=enabled)

    def optimizer_step(self, optimizer, update_scale=True):
        self.scaler.step(optimizer)
        optimizer.zero_grad(set_to_none=True)
        if update_scale:
            self.scaler.update()


def step_optimizer(scaler, optimizer, *, last=False):
    scaler.step(optimizer)
    if last:
        scaler.update()
