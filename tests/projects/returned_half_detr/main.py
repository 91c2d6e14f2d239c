import argparse

import torch

from engine import train_one_epoch
from models.detr import DETR


def criterion(outputs, targets):
    return (outputs["pred_boxes"] - targets).abs().mean() + outputs["pred_logits"].logsumexp(-1).mean()


def main(args, data_loader):
    model = DETR(hidden_dim=args.hidden_dim, num_queries=args.num_queries)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, scaler)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden_dim", type=int, default=256)
    parser.add_argument("--num_queries", type=int, default=100)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=1)
    main(parser.parse_args(), [])
