'''Train CIFAR10 with PyTorch (AMP added).'''
import argparse

import torch
import torch.nn as nn
import torch.optim as optim

from models import ResNet18
from utils import finish_step, make_train_step

parser = argparse.ArgumentParser(description='PyTorch CIFAR10 Training')
parser.add_argument('--lr', default=0.1, type=float, help='learning rate')
args = parser.parse_args()

device = 'cuda'
trainloader = torch.load('cifar_train.pt')

net = ResNet18().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=200)
scaler = torch.amp.GradScaler('cuda')
train_step = make_train_step(net, criterion, optimizer, scaler)


def train(epoch):
    print('\nEpoch: %d' % epoch)
    net.train()
    train_loss = 0
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = inputs.to(device), targets.to(device)
        loss, outputs = train_step(inputs, targets)
        train_loss += loss.item()
    print('Loss: %.3f' % (train_loss / (batch_idx + 1)))


for epoch in range(200):
    train(epoch)
    finish_step(scaler, scheduler)
