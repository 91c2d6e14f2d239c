"""ImageNet training (the shape of pytorch/examples imagenet/main.py, split into a placement helper,
a trainer class and a model package)."""
import argparse

import torch
import torch.nn as nn

from lib.data import imagenet_loaders
from lib.engine import Trainer
from lib.setup import place_model
from nets import build_net

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("data", metavar="DIR", nargs="?", default="imagenet")
parser.add_argument("-a", "--arch", default="wrn50_2")
parser.add_argument("--epochs", default=90, type=int)
parser.add_argument("-b", "--batch-size", default=256, type=int)
parser.add_argument("--lr", default=0.1, type=float)
parser.add_argument("--gpu", default=None, type=int)
parser.add_argument("--distributed", action="store_true")
parser.add_argument("--amp-dtype", default="bfloat16", choices=["bfloat16", "float16"])


def main():
    args = parser.parse_args()
    model = place_model(build_net(args.arch), args)
    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)
    train_loader, val_loader = imagenet_loaders(args)
    trainer = Trainer(model, criterion, optimizer, args)
    for epoch in range(args.epochs):
        trainer.train_epoch(train_loader, epoch)
        print(f"epoch {epoch}: top-1 {trainer.evaluate(val_loader):.2f}")


if __name__ == "__main__":
    main()
