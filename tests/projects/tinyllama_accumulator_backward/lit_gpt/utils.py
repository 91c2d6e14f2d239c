import torch
import torch.nn.functional as F


def chunked_cross_entropy(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-1)


class GradientAccumulator:
    """Counts micro-steps and runs each micro-step's backward on the averaged loss."""

    def __init__(self, steps):
        self.steps = steps
        self.micro_step = 0

    @property
    def is_accumulating(self):
        return (self.micro_step + 1) % self.steps != 0

    def backward(self, loss):
        with torch.autocast("cuda", enabled=False):
            (loss / self.steps).backward()
        self.micro_step += 1
