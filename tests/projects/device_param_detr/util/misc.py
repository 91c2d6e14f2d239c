from collections import defaultdict

import torch


class MetricLogger:
    def __init__(self):
        self.meters = defaultdict(list)

    def update(self, **kwargs):
        for k, v in kwargs.items():
            self.meters[k].append(float(v))

    def averages(self):
        return {k: sum(v) / max(len(v), 1) for k, v in self.meters.items()}


def collate_fn(batch):
    samples, targets = zip(*batch)
    return torch.stack(samples), list(targets)
