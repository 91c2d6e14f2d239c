import math
import sys

import torch


def train_one_epoch(model, criterion, data_loader, optimizer, scaler, device, max_norm=0):
    model.train()
    for samples, targets in data_loader:
        src, pos, ref, shapes, starts = [t.to(device) for t in samples]
        with torch.cuda.amp.autocast():
            outputs = model(src, pos, ref, shapes, starts)
            loss = criterion(outputs, targets)
        if not math.isfinite(loss.item()):
            print("Loss is {}, stopping training".format(loss.item()))
            sys.exit(1)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
