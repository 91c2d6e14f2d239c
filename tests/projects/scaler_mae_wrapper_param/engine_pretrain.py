import math
import sys

import torch


def train_one_epoch(model, data_loader, optimizer, device, epoch, loss_scaler, args=None):
    model.train(True)
    accum_iter = args.accum_iter
    optimizer.zero_grad()
    for data_iter_step, (samples, _) in enumerate(data_loader):
        samples = samples.to(device, non_blocking=True)
        with torch.autocast("cuda"):
            loss, _, _ = model(samples, mask_ratio=args.mask_ratio)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            sys.exit(1)
        loss /= accum_iter
        loss_scaler(loss, optimizer, parameters=model.parameters(),
                    update_grad=(data_iter_step + 1) % accum_iter == 0)
        if (data_iter_step + 1) % accum_iter == 0:
            optimizer.zero_grad()
    return loss_value


def train_one_epoch_plain(model, data_loader, optimizer, device, loss_scaler, args=None):
    model.train(True)
    for samples, _ in data_loader:
        samples = samples.to(device, non_blocking=True)
        with torch.autocast("cuda"):
            loss, _, _ = model(samples, mask_ratio=args.mask_ratio)
        loss_scaler.step(loss, optimizer, parameters=model.parameters())
        optimizer.zero_grad()
    return loss.item()
