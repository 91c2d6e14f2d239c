import torch


class AverageMeter:
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def grad_logger(named_params, scaler=None, optimizer=None):
    if scaler is not None:
        scaler.unscale_(optimizer)
    stats = AverageMeter()
    for n, p in named_params:
        if p.grad is not None and not (n.endswith(".bias") or len(p.shape) == 1):
            stats.update(float(torch.norm(p.grad.data)))
    return stats
