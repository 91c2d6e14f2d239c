import argparse

import torch
import torch.nn as nn

from simsiam.builder import SimSiam
from simsiam.features import extract_features


def train(train_loader, model, epochs, lr):
    head = nn.Linear(2048, 1000).cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr, momentum=0.9)
    model.eval()
    for epoch in range(epochs):
        for images, target in train_loader:
            features = extract_features(model, images.cuda(non_blocking=True))
            output = head(features)
            loss = criterion(output, target.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return head


def main():
    parser = argparse.ArgumentParser(description="SimSiam linear classification")
    parser.add_argument("--pretrained", default="checkpoint_0099.pth.tar")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    model = SimSiam()
    model.load_state_dict(torch.load(args.pretrained, map_location="cpu")["state_dict"])
    train(torch.load("imagenet_train_loader.pt"), model.cuda(), args.epochs, args.lr)


if __name__ == "__main__":
    main()
