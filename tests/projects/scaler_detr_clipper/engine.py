import torch

import util.misc as utils


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, scaler, grad_hook=None):
    model.train()
    criterion.train()
    meter = utils.SmoothedValue()
    for samples, targets in data_loader:
        samples = samples.to(device)
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(samples)
            loss_dict = criterion(outputs, targets)
            losses = sum(loss_dict.values())
        optimizer.zero_grad()
        scaler.scale(losses).backward()
        if grad_hook is not None:
            grad_hook(model.parameters())
        scaler.step(optimizer)
        scaler.update()
        meter.update(losses.item())
    return meter.total / max(meter.count, 1)
