import torch


class AverageMeter:
    def __init__(self):
        self.sum = self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


@torch.no_grad()
def guess_labels(model, weak, threshold):
    probs = torch.softmax(model(weak).float(), dim=-1)
    max_probs, targets = probs.max(dim=-1)
    return targets, max_probs.ge(threshold).float()
