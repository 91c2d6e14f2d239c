import argparse

import torch

from engine import evaluate, train_one_epoch
from utils import build_model, build_teacher, save_on_master


def get_args_parser():
    parser = argparse.ArgumentParser("DeiT training and evaluation script", add_help=False)
    parser.add_argument("--batch-size", default=64, type=int)
    parser.add_argument("--epochs", default=300, type=int)
    parser.add_argument("--nb-classes", default=10, type=int)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--clip-grad", type=float, default=1.0)
    parser.add_argument("--half-weights", type=bool, default=True, help="keep the weights in fp16 to save memory")
    parser.add_argument("--data-path", default="/datasets01/cifar10/", type=str)
    parser.add_argument("--device", default="cuda")
    return parser


def main(args):
    device = torch.device(args.device)
    data_loader_train = torch.load(args.data_path + "train.pt")
    data_loader_val = torch.load(args.data_path + "val.pt")
    model = build_model(args)
    model.to(device)
    teacher = build_teacher(args).to(device)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_scaler = torch.amp.GradScaler("cuda")
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader_train, optimizer, device, loss_scaler,
                        max_norm=args.clip_grad)
        print(f"epoch {epoch}: {evaluate(data_loader_val, teacher, device)} correct")
        save_on_master({"model": model.state_dict(), "epoch": epoch}, f"checkpoint_{epoch}.pth")


if __name__ == "__main__":
    parser = argparse.ArgumentParser("DeiT training and evaluation script", parents=[get_args_parser()])
    main(parser.parse_args())
