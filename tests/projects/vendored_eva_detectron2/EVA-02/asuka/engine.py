import torch


def train_one_epoch(model, loader, optimizer):
    scaler = torch.cuda.amp.GradScaler()
    for samples in loader:
        with torch.cuda.amp.autocast():
            loss = model(samples)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
