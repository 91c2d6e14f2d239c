import torch


def forward_loss(model, samples, targets, criterion):
    with torch.autocast("cuda", dtype=torch.float16):
        outputs = model(samples)
        return criterion(outputs, targets)


def train_one_epoch(model, criterion, data_loader, optimizer, device, loss_scaler, max_norm=0.0):
    model.train()
    for samples, targets in data_loader:
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        loss = forward_loss(model, samples, targets, criterion)
        optimizer.zero_grad()
        loss_scaler.scale(loss).backward()
        if max_norm > 0:
            loss_scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        loss_scaler.step(optimizer)
        loss_scaler.update()


@torch.no_grad()
def evaluate(data_loader, teacher, device):
    teacher.eval()
    correct = 0
    for images, target in data_loader:
        output = teacher(images.to(device))
        correct += (output.argmax(-1) == target.to(device)).sum().item()
    return correct
