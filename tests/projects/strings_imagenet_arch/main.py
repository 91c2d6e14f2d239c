"""Laid out like pytorch/examples imagenet/main.py (`models.__dict__[args.arch]()`, `--arch`
with a default), with the project's own models package instead of torchvision's."""
import argparse

import torch
import torch.nn as nn

import models

model_names = sorted(name for name in models.__dict__
                     if name.islower() and not name.startswith("__")
                     and callable(models.__dict__[name]))

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("data", metavar="DIR", nargs="?", default="imagenet")
parser.add_argument("-a", "--arch", metavar="ARCH", default="resnet18",
                    choices=model_names,
                    help="model architecture: " + " | ".join(model_names) + " (default: resnet18)")
parser.add_argument("--epochs", default=90, type=int, metavar="N")


def main():
    args = parser.parse_args()
    print("=> creating model '{}'".format(args.arch))
    model = models.__dict__[args.arch]()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.1)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(args.epochs):
        train([], model, criterion, optimizer, scaler)


def train(train_loader, model, criterion, optimizer, scaler):
    model.train()
    for images, target in train_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    main()
