import argparse
import time

import torch
from torch.utils.data import DataLoader

from engine import evaluate, train_one_epoch
from models import build_model
from util.misc import collate_fn


def get_args_parser():
    parser = argparse.ArgumentParser("Set transformer detector", add_help=False)
    parser.add_argument("--lr", default=1e-4, type=float)
    parser.add_argument("--batch_size", default=2, type=int)
    parser.add_argument("--epochs", default=300, type=int)
    parser.add_argument("--clip_max_norm", default=0.1, type=float)
    parser.add_argument("--num_classes", default=91, type=int)
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--device", default="cuda", help="device to use for training / testing")
    return parser


def main(args):
    device = torch.device(args.device)
    model, criterion = build_model(args)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scaler = torch.amp.GradScaler(args.device, enabled=args.amp)
    data_loader_train = DataLoader([], batch_size=args.batch_size, collate_fn=collate_fn)
    data_loader_val = DataLoader([], batch_size=1, collate_fn=collate_fn)
    start = time.time()
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader_train, optimizer, device, epoch, args.clip_max_norm,
                        scaler=scaler, amp=args.amp)
        evaluate(model, criterion, data_loader_val, device=device)
    print("training time", time.time() - start)


if __name__ == "__main__":
    main(get_args_parser().parse_args())
