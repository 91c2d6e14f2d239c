"""Train and eval functions used in main.py"""
import math
import sys

import torch

import util.misc as utils


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, max_norm=0, scaler=None, amp=False):
    model.train()
    criterion.train()
    logger = utils.MetricLogger()
    for samples, targets in data_loader:
        samples = samples.to(device)
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        with torch.autocast(device_type=device, enabled=amp):
            outputs = model(samples)
            loss = criterion(outputs, targets)
        if not math.isfinite(loss.item()):
            print("Loss is {}, stopping training".format(loss.item()))
            sys.exit(1)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        if max_norm > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        logger.update(loss=loss.item())
    return logger.averages()


@torch.no_grad()
def evaluate(model, criterion, data_loader, device):
    model.eval()
    total = 0.0
    for samples, targets in data_loader:
        samples = samples.to(device)
        with torch.autocast(device.type):
            outputs = model(samples)
        total += criterion(outputs, [{k: v.to(device) for k, v in t.items()} for t in targets]).item()
    return total
