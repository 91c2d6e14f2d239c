import torch

from utils.profiling import timed


def build_optimizer(config, model):
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}],
                             lr=config.TRAIN.BASE_LR, weight_decay=0.05)


@timed("optimizer")
def optimizer_step(optimizer, scaler=None):
    if scaler is not None:
        scaler.step(optimizer)
    else:
        optimizer.step()
    optimizer.zero_grad()
