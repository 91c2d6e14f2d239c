import torch

from models import build_model


def train_one_epoch(config, model, criterion, loader, optimizer, scaler):
    model.train()
    for images, labels in loader:
        images = images.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        with torch.cuda.amp.autocast(enabled=config.amp):
            logits = model(images)
        loss = criterion(logits, labels)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(config, loader):
    model = build_model(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler(enabled=config.amp)
    criterion = torch.nn.CrossEntropyLoss()
    for _ in range(config.epochs):
        train_one_epoch(config, model, criterion, loader, optimizer, scaler)
