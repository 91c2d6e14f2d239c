import argparse

import torch
from torch import nn

from engine import evaluate, train_one_epoch
from models import PatchEmbedNet


def main(args):
    device = torch.device(args.device)
    model = PatchEmbedNet(embed_dim=args.dim).to(device)
    prototypes = nn.Parameter(torch.randn(args.classes, args.dim, device=device))
    params = list(model.parameters()) + [prototypes]
    optimizer = torch.optim.AdamW(params, lr=args.lr)
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss()
    images = torch.randn(64, 3, 32, 32)
    labels = torch.randint(0, args.classes, (64,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=16)
    for _ in range(args.epochs):
        train_one_epoch(model, prototypes, criterion, loader, optimizer, scaler, device)
        print("entropy", evaluate(model, prototypes, loader, device))


if __name__ == "__main__":
    parser = argparse.ArgumentParser("DeiT training", add_help=False)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dim", default=64, type=int)
    parser.add_argument("--classes", default=10, type=int)
    parser.add_argument("--lr", default=5e-4, type=float)
    parser.add_argument("--epochs", default=1, type=int)
    main(parser.parse_args())
