"""A single-file fine-tuning script (BEiT/VideoMAE forks that inline utils.py's
NativeScalerWithGradNormCount next to the training loop)."""

import torch


class NativeScalerWithGradNormCount:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, update_grad=True):
        self._scaler.scale(loss).backward()
        norm = None
        if update_grad:
            self._scaler.unscale_(optimizer)
            if clip_grad is not None:
                norm = torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
            self._scaler.step(optimizer)
            self._scaler.update()
        return norm

    def step(self, loss, optimizer, parameters=None):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
        self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()


def train_one_epoch(model, criterion, loader, optimizer, loss_scaler, clip_grad):
    for samples, targets in loader:
        with torch.autocast("cuda"):
            loss = criterion(model(samples), targets)
        loss_scaler(loss, optimizer, clip_grad=clip_grad, parameters=model.parameters())
        optimizer.zero_grad()


def finetune_head(model, criterion, loader, optimizer):
    loss_scaler = NativeScalerWithGradNormCount()
    for samples, targets in loader:
        with torch.autocast("cuda"):
            loss = criterion(model(samples), targets)
        loss_scaler.step(loss, optimizer, parameters=model.parameters())
        optimizer.zero_grad()
    return loss_scaler.state_dict()
