import argparse

import torch
import torch.nn as nn

from image_classification.executor import Executor
from image_classification.training import Trainer, train_loop


def main(args, model, train_loader):
    scaler = torch.amp.GradScaler("cuda", init_scale=args.static_loss_scale, enabled=args.amp)
    executor = Executor(model.cuda(), nn.CrossEntropyLoss().cuda(), amp=args.amp, scaler=scaler,
                        divide_loss=args.batch_size_multiplier)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    trainer = Trainer(executor, optimizer, grad_acc_steps=args.batch_size_multiplier)
    train_loop(trainer, train_loader, args.epochs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--static-loss-scale", type=float, default=128.0)
    parser.add_argument("--batch-size-multiplier", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.256)
    parser.add_argument("--momentum", type=float, default=0.875)
    parser.add_argument("--epochs", type=int, default=90)
