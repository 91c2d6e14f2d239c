import torch


class GradClipper:
    """Clips the total gradient norm and keeps it for the MetricLogger."""

    def __init__(self, max_norm):
        self.max_norm = max_norm
        self.total_norm = None

    def __call__(self, parameters):
        self.total_norm = torch.nn.utils.clip_grad_norm_(parameters, self.max_norm)
        return self.total_norm


class GradNormMeter:
    """Measures the total gradient norm without changing the gradients."""

    def __init__(self):
        self.total_norm = None

    def __call__(self, parameters):
        norms = [p.grad.detach().norm(2) for p in parameters if p.grad is not None]
        self.total_norm = torch.norm(torch.stack(norms), 2)
        return self.total_norm


class SmoothedValue:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value):
        self.total += value
        self.count += 1
