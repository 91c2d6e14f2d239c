import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device):
    model.train(True)
    for samples, targets in data_loader:
        with torch.cuda.amp.autocast():
            outputs = model(samples)
            loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(data_loader, model, device):
    model.eval()
    for images, target in data_loader:
        output = model(images)
    return output
