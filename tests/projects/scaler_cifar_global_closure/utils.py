'''Some helper functions for PyTorch, including:
    - make_train_step: one optimisation step under AMP.
    - finish_step: the scaler's and the scheduler's bookkeeping.
'''
import torch


def make_train_step(net, criterion, optimizer, scaler):
    def train_step(inputs, targets):
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = net(inputs)
            loss = criterion(outputs, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        return loss, outputs

    return train_step


def finish_step(scaler, lr_scheduler=None):
    scaler.update()
    if lr_scheduler is not None:
        lr_scheduler.step()
