import argparse

import torch

from detectron2.engine import AMPTrainer
from projects.ViTDet.vitdet import BF16AMPTrainer


def do_train(args, model, data_loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    trainer_cls = BF16AMPTrainer if args.bf16 else AMPTrainer
    trainer = trainer_cls(model, data_loader, optimizer)
    trainer.train(0, args.max_iter)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--max-iter", type=int, default=90000)
    parser.add_argument("--bf16", action="store_true")
    args = parser.parse_args()
    model = torch.load("model_final.pth")
    data_loader = torch.load("train_loader.pth")
    do_train(args, model, data_loader)


if __name__ == "__main__":
    main()
