import torch

from optim_utils import backward_and_step


def train_epoch(model, loader, optimizer, scaler, loss_fn):
    model.train()
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
            backward_and_step(loss, optimizer, scaler)
