import torch


class ComputeLoss:
    def __init__(self, model):
        self.nl = 1

    def __call__(self, p, targets):
        loss = sum(pi.float().pow(2).mean() for pi in p)
        return loss, torch.stack((loss, loss)).detach()
