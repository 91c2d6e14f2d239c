"""Pre-training entry point, as facebookresearch/mae's main_pretrain.py builds it."""
import argparse

import torch

import models_mae
from engine_pretrain import train_one_epoch
from util.misc import NativeScalerWithGradNormCount as NativeScaler


def main(args):
    device = torch.device(args.device)
    model = models_mae.MaskedAutoencoder().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_scaler = NativeScaler()
    data = [(torch.randn(args.batch_size, 8, 12), None) for _ in range(2)]
    for _ in range(args.epochs):
        last = train_one_epoch(model, data, optimizer, device, loss_scaler)
    return last


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    print(main(parser.parse_args()))
