"""train_one_epoch: the scaled backward and the unscale are here, the clip and step in utils."""

import torch

from utils import clip_and_step


def train_one_epoch(config, model, criterion, loader, optimizer, scaler):
    model.train()
    for samples, targets in loader:
        with torch.autocast("cuda", enabled=config.amp):
            loss = criterion(model(samples), targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip_and_step(model, optimizer, scaler, config.clip_grad)
        optimizer.zero_grad()


def main(config, model, criterion, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=config.amp)
    for epoch in range(config.epochs):
        train_one_epoch(config, model, criterion, loader, optimizer, scaler)
