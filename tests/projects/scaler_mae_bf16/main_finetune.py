import argparse

import torch

from engine_finetune import train_one_epoch, evaluate


def get_args_parser():
    parser = argparse.ArgumentParser('MAE fine-tuning for image classification', add_help=False)
    parser.add_argument('--batch_size', default=64, type=int)
    parser.add_argument('--epochs', default=50, type=int)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--device', default='cuda')
    return parser


def main(args):
    device = torch.device(args.device)
    model = torch.nn.Linear(768, 1000).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = torch.nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler('cuda')
    for epoch in range(args.epochs):
        train_stats = train_one_epoch(model, criterion, [], optimizer, device, epoch, scaler)
        test_stats = evaluate([], model, device)


if __name__ == '__main__':
    args = get_args_parser().parse_args()
    main(args)
