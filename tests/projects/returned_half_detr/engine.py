import torch


def train_one_epoch(model, criterion, data_loader, optimizer, scaler, max_norm=0.1):
    model.train()
    for samples, targets in data_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(samples)
            loss = criterion(outputs, targets)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
