import argparse

import torch

import util.misc as utils
from engine import train_one_epoch


def main(args):
    device = torch.device(args.device)
    model = torch.hub.load("facebookresearch/detr", "detr_resnet50", pretrained=False)
    model.to(device)
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scaler = torch.cuda.amp.GradScaler()
    grad_hook = utils.GradClipper(args.clip_max_norm) if args.clip_max_norm > 0 else None
    data_loader = torch.load(args.data)
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, scaler, grad_hook=grad_hook)


if __name__ == "__main__":
    parser = argparse.ArgumentParser("DETR training")
    parser.add_argument("--lr", default=1e-4, type=float)
    parser.add_argument("--clip_max_norm", default=0.1, type=float)
    parser.add_argument("--epochs", default=300, type=int)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--data", required=True)
    main(parser.parse_args())
