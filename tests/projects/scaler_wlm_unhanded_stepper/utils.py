import torch


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class ClippedStepper(object):
    """Clips the gradient norm, then steps; through the GradScaler when one is given (the
    caller updates it once per batch)."""

    def __init__(self, model, optimizer, clip, scaler=None):
        self.model = model
        self.optimizer = optimizer
        self.clip = clip
        self.scaler = scaler

    def step(self):
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.scaler.step(self.optimizer)
        else:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            self.optimizer.step()
        self.optimizer.zero_grad()
