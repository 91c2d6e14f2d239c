'''Train CIFAR10 with PyTorch.'''
import argparse

import torch
import torch.nn as nn
import torch.optim as optim

from models import *
from utils import OptimizerStepper, progress_bar


def train(epoch, net, trainloader, args):
    print('\nEpoch: %d' % epoch)
    net.train()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scaler = torch.amp.GradScaler('cuda', enabled=args.amp)
    stepper = OptimizerStepper(optimizer, accum=args.accum)
    train_loss = 0
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = inputs.to('cuda'), targets.to('cuda')
        with torch.autocast('cuda', dtype=torch.float16, enabled=args.amp):
            outputs = net(inputs)
            loss = criterion(outputs, targets) / args.accum
        scaler.scale(loss).backward()
        stepper.step(batch_idx)
        train_loss += loss.item()
        progress_bar(batch_idx, len(trainloader), 'Loss: %.3f' % (train_loss / (batch_idx + 1)))


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='PyTorch CIFAR10 Training')
    parser.add_argument('--lr', default=0.1, type=float, help='learning rate')
    parser.add_argument('--accum', default=2, type=int, help='batches per optimizer step')
    parser.add_argument('--amp', action='store_true', default=True)
    args = parser.parse_args()
    net = ResNet18().to('cuda')
    loader = [(torch.rand(4, 3, 32, 32), torch.randint(0, 10, (4,))) for _ in range(4)]
    for epoch in range(2):
        train(epoch, net, loader, args)
