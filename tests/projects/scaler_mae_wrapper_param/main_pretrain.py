import argparse

import torch

from engine_pretrain import train_one_epoch, train_one_epoch_plain
from util.misc import NativeScalerWithGradNormCount as NativeScaler


def get_args_parser():
    parser = argparse.ArgumentParser("MAE pre-training", add_help=False)
    parser.add_argument("--epochs", default=400, type=int)
    parser.add_argument("--accum_iter", default=1, type=int)
    parser.add_argument("--mask_ratio", default=0.75, type=float)
    parser.add_argument("--plain", action="store_true")
    return parser


def main(args):
    device = torch.device("cuda")
    model = torch.nn.Linear(768, 768).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.5e-4, betas=(0.9, 0.95))
    loss_scaler = NativeScaler()
    data_loader_train = [(torch.randn(8, 768), None) for _ in range(10)]
    for epoch in range(args.epochs):
        if args.plain:
            train_one_epoch_plain(model, data_loader_train, optimizer, device, loss_scaler, args=args)
        else:
            train_one_epoch(model, data_loader_train, optimizer, device, epoch, loss_scaler, args=args)


if __name__ == "__main__":
    main(get_args_parser().parse_args())
