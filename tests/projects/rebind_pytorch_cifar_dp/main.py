'''Train CIFAR10 with PyTorch (a fork with --bf16 autocast).'''
import argparse

import torch
import torch.nn as nn
import torch.optim as optim

from models.resnet import ResNet18
from utils import parallelize, progress_bar

parser = argparse.ArgumentParser(description='PyTorch CIFAR10 Training')
parser.add_argument('--lr', default=0.1, type=float, help='learning rate')
parser.add_argument('--epochs', default=2, type=int)
parser.add_argument('--steps', default=4, type=int, help='batches per epoch')
args = parser.parse_args()

device = 'cuda' if torch.cuda.is_available() else 'cpu'

print('==> Building model..')
net = ResNet18()
net = parallelize(net, device)

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)


def train(epoch):
    print('\nEpoch: %d' % epoch)
    net.train()
    train_loss = 0
    for batch_idx in range(args.steps):
        inputs = torch.randn(32, 3, 32, 32, device=device)
        targets = torch.randint(0, 10, (32,), device=device)
        optimizer.zero_grad()
        with torch.autocast(device, dtype=torch.bfloat16):
            outputs = net(inputs)
            loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
        progress_bar(batch_idx, args.steps, 'Loss: %.3f' % (train_loss / (batch_idx + 1)))


for epoch in range(args.epochs):
    train(epoch)
