from typing import Optional

import torch

from losses import BCEDice
from models import Net


def train_one_epoch(model: Net, loader, optimizer, scaler, criterion: Optional["BCEDice"] = None):
    model.train()
    for x, mask, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(x, mask)
            loss = criterion(logits, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
