"""Multi-label image training (the amp_autocast idiom of huggingface/pytorch-image-models'
train.py, split as timm-based repositories do: this script, engine/ with the epoch loop,
models/, losses.py)."""
import argparse
from contextlib import suppress
from functools import partial

import torch

from engine import train_one_epoch, validate
from losses import BinaryCrossEntropy
from models import create_model

parser = argparse.ArgumentParser(description="multi-label training")
parser.add_argument("--model", default="vit_tiny")
parser.add_argument("--num-classes", type=int, default=80)
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--amp", action="store_true", default=False)
parser.add_argument("--device", default="cuda")


def main():
    args = parser.parse_args()
    device = torch.device(args.device)
    model = create_model(args.model, num_classes=args.num_classes).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)

    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if args.amp:
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=torch.float16)
        loss_scaler = torch.amp.GradScaler(device.type)
        print("Using native Torch AMP. Training in mixed precision.")

    train_loss_fn = BinaryCrossEntropy(smoothing=0.1).to(device)
    loader_train, loader_eval = build_loaders(args)
    for epoch in range(args.epochs):
        train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fn, args,
                        amp_autocast=amp_autocast, loss_scaler=loss_scaler)
        print(epoch, validate(model, loader_eval, amp_autocast=amp_autocast))


def build_loaders(args):
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.randn(512, 3, 64, 64), torch.randint(0, 2, (512, args.num_classes)).float())
    return DataLoader(data, batch_size=64, shuffle=True), DataLoader(data, batch_size=64)


if __name__ == "__main__":
    main()
