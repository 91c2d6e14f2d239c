import math
import sys
from typing import Iterable

import torch


def train_one_epoch(model: torch.nn.Module, criterion: torch.nn.Module,
                    data_loader: Iterable, optimizer: torch.optim.Optimizer,
                    device: torch.device, epoch: int, scaler, max_norm: float = 0):
    model.train(True)
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)

        with torch.autocast('cuda', dtype=torch.bfloat16):
            outputs = model(samples)
            loss = criterion(outputs, targets)

        loss_value = loss.item()
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)

        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    return {"loss": loss_value}


@torch.no_grad()
def evaluate(data_loader, model, device):
    model.eval()
    for images, target in data_loader:
        images = images.to(device, non_blocking=True)
        with torch.autocast('cuda', dtype=torch.bfloat16):
            output = model(images)
    return output
