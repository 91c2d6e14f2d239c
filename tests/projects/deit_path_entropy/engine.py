import torch


def prototype_entropy(scores, eps=1e-8):
    probs = torch.sigmoid(scores)
    return -(probs * torch.log(probs + eps)).mean()


def train_one_epoch(model, prototypes, criterion, data_loader, optimizer, scaler, device):
    model.train()
    for samples, targets in data_loader:
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            features = model(samples)
            scores = features @ prototypes.t()
            loss = criterion(scores, targets) + 0.1 * prototype_entropy(scores)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


@torch.no_grad()
def evaluate(model, prototypes, data_loader, device):
    model.eval()
    total = 0.0
    for samples, _ in data_loader:
        features = model(samples.to(device, non_blocking=True))
        total += prototype_entropy(features @ prototypes.t()).item()
    return total / len(data_loader)
