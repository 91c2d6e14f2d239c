import argparse

import torch

from engine import train_one_epoch
from models.deformable_detr import DeformableDETR


def main(args):
    device = torch.device(args.device)
    model = DeformableDETR(args.num_classes)
    model.to(device)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, [], optimizer, scaler, device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser("Deformable DETR")
    parser.add_argument("--num_classes", default=91, type=int)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--lr", default=2e-4, type=float)
    parser.add_argument("--epochs", default=50, type=int)
    main(parser.parse_args())
