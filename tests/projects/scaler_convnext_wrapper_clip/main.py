import argparse

import torch

from engine import train_one_epoch
from utils import NativeScalerWithGradNormCount as NativeScaler


def get_args_parser():
    parser = argparse.ArgumentParser("ConvNeXt training and evaluation script", add_help=False)
    parser.add_argument("--epochs", default=300, type=int)
    parser.add_argument("--update_freq", default=1, type=int)
    parser.add_argument("--clip_grad", type=float, default=None)
    parser.add_argument("--lr", type=float, default=4e-3)
    return parser


def main(args):
    device = torch.device("cuda")
    model = torch.nn.Linear(224, 1000).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    loss_scaler = NativeScaler()
    data_loader_train = [(torch.randn(8, 224), torch.randint(0, 1000, (8,))) for _ in range(10)]
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader_train, optimizer, device, epoch, loss_scaler,
                        args.clip_grad, args.update_freq)


if __name__ == "__main__":
    main(get_args_parser().parse_args())
