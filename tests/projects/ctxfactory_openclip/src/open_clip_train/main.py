import argparse

import torch

from open_clip import CLIP
from .train import train_one_epoch


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default="amp")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args(argv)
    model = CLIP().to(args.device)
    teacher = torch.load("teacher.pt").to(args.device).eval()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    scaler = torch.amp.GradScaler("cuda")
    data = []
    for epoch in range(args.epochs):
        train_one_epoch(model, teacher, data, epoch, optimizer, scaler, args)


if __name__ == "__main__":
    main()
