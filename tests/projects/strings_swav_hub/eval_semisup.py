import argparse

import torch
import torch.nn as nn

from hubconf import resnet50

parser = argparse.ArgumentParser(description="Evaluate models: Fine-tuning with 1% or 10% labels on ImageNet")
parser.add_argument("--epochs", default=20, type=int)
parser.add_argument("--lr", default=0.01, type=float)


def train(model, optimizer, loader, scaler, criterion):
    model.train()
    for inp, target in loader:
        inp, target = inp.cuda(non_blocking=True), target.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            output = model(inp)
            loss = criterion(output, target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main():
    args = parser.parse_args()
    model = resnet50(pretrained=True, output_dim=1000).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(args.epochs):
        train(model, optimizer, [], scaler, nn.CrossEntropyLoss())


if __name__ == "__main__":
    main()
