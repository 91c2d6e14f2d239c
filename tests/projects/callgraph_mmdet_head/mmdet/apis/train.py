import torch


def train(model, data_loader, optimizer):
    model.train()
    for data in data_loader:
        outputs = model.train_step(data, optimizer)
        optimizer.zero_grad()
        outputs["loss"].backward()
        optimizer.step()
