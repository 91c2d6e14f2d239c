import argparse

import torch
import torch.nn as nn

from models import *

parser = argparse.ArgumentParser(description="PyTorch CIFAR10 Training")
parser.add_argument("--lr", default=0.1, type=float)
parser.add_argument("--model", default="ResNet18", type=str)
args = parser.parse_args()

device = "cuda"
net = globals()[args.model](num_classes=10).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
scaler = torch.amp.GradScaler("cuda")


def train(loader):
    net.train()
    for inputs, targets, keep in loader:
        inputs, targets, keep = inputs.to(device), targets.to(device), keep.to(device)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = net(inputs, keep)
            loss = criterion(outputs, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


for epoch in range(200):
    train(torch.load("loader.pt"))
