import time
from collections import OrderedDict
from contextlib import suppress

import torch


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, amp_autocast=suppress, loss_scaler=None):
    model.train()
    start = time.time()
    losses = []
    for batch_idx, (input, target) in enumerate(loader):
        input, target = input.cuda(), target.cuda()
        with amp_autocast():
            output = model(input)
            loss = loss_fn(output, target)
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler.scale(loss).backward()
            loss_scaler.step(optimizer)
            loss_scaler.update()
        else:
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
    return OrderedDict([("loss", sum(losses) / max(len(losses), 1)), ("time", time.time() - start)])


def validate(model, loader, amp_autocast=suppress):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        for input, target in loader:
            with amp_autocast():
                output = model(input.cuda())
            hits += ((output > 0).float() == target.cuda()).float().sum().item()
            total += target.numel()
    return hits / max(total, 1)
