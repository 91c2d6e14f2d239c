"""One optimisation step and the end-of-epoch bookkeeping, split from the loop as in
template-style research repositories (e.g. victoresque/pytorch-template's trainer/ or the
`train_one_epoch` / `engine.py` split of facebookresearch/detr): the step runs the scaler's
step, and `end_epoch` updates the scaler with the learning-rate schedule."""
import torch


def train_step(model, batch, criterion, optimizer, scaler):
    inputs, targets = batch
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(inputs), targets)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    return loss.detach()


def end_epoch(scaler, scheduler):
    scheduler.step()
    scaler.update()
