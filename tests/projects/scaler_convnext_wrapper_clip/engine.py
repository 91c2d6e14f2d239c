import math

import torch

import utils


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, loss_scaler,
                    max_norm=0, update_freq=1):
    model.train(True)
    meter = utils.SmoothedValue()
    optimizer.zero_grad()
    for data_iter_step, (samples, targets) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            output = model(samples)
            loss = criterion(output, targets)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            raise ValueError("Loss is {}, stopping training".format(loss_value))
        loss /= update_freq
        loss_scaler.backward(loss)
        if (data_iter_step + 1) % update_freq == 0:
            if max_norm:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            loss_scaler.step(optimizer)
            optimizer.zero_grad()
        meter.update(loss_value)
    return meter.total / max(meter.count, 1)
