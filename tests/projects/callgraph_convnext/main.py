import argparse

import torch

import models
from engine import evaluate, train_one_epoch


def get_args_parser():
    parser = argparse.ArgumentParser("ConvNeXt training and evaluation script", add_help=False)
    parser.add_argument("--epochs", default=300, type=int)
    return parser


def train(args):
    model = models.convnext_tiny()
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, [], optimizer, "cuda")
        evaluate([], model, "cuda")


if __name__ == "__main__":
    parser = argparse.ArgumentParser("ConvNeXt", parents=[get_args_parser()])
    args = parser.parse_args()
    train(args)
