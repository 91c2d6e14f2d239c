import argparse

import torch

from engine import train_one_epoch, evaluate
from models import deit_tiny_patch16_224


def get_args_parser():
    parser = argparse.ArgumentParser('DeiT training and evaluation script', add_help=False)
    parser.add_argument('--batch-size', default=64, type=int)
    parser.add_argument('--epochs', default=300, type=int)
    parser.add_argument('--nb-classes', default=1000, type=int)
    parser.add_argument('--half', action='store_true', help='keep the weights in float16 to save memory')
    parser.add_argument('--eval', action='store_true')
    parser.add_argument('--device', default='cuda')
    return parser


def main(args):
    device = torch.device(args.device)
    model = deit_tiny_patch16_224(num_classes=args.nb_classes)
    model.to(device)
    if args.half:
        model.half()
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    loss_scaler = torch.cuda.amp.GradScaler()
    if args.eval:
        test_stats = evaluate([], model, device)
        return
    for epoch in range(args.epochs):
        train_stats = train_one_epoch(
            model, criterion, [], optimizer, device, epoch, loss_scaler,
        )


if __name__ == '__main__':
    parser = argparse.ArgumentParser('DeiT training and evaluation script', parents=[get_args_parser()])
    args = parser.parse_args()
    main(args)
