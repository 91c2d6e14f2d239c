import torch


def train_class_batch(model, samples, target, criterion):
    outputs = model(samples)
    loss = criterion(outputs, target)
    return loss, outputs


def train_one_epoch(model, criterion, data_loader, optimizer, device, loss_scaler=None,
                    mixup_fn=None):
    model.train(True)
    for samples, targets in data_loader:
        samples = samples.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        if mixup_fn is not None:
            samples, targets = mixup_fn(samples, targets)

        if loss_scaler is None:
            samples = samples.half()
            loss, output = train_class_batch(model, samples, targets, criterion)
        else:
            with torch.cuda.amp.autocast():
                loss, output = train_class_batch(model, samples, targets, criterion)

        if loss_scaler is None:
            model.backward(loss)
            model.step()
        else:
            optimizer.zero_grad()
            loss_scaler(loss, optimizer, parameters=model.parameters())
