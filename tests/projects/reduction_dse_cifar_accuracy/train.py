import torch

from utils import test


def main(model, train_loader, test_loader, optimizer, criterion):
    model = model.cuda().half()
    for epoch in range(10):
        model.train()
        for data, target in train_loader:
            data, target = data.cuda().half(), target.cuda()
            loss = criterion(model(data), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc = test(epoch, model, test_loader, fp16=True)
    return acc
