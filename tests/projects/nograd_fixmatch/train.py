import argparse

import torch
import torch.nn.functional as F

from models.wideresnet import build_wideresnet
from utils.misc import AverageMeter, guess_labels


def train(args, labeled, unlabeled, model, optimizer, scaler):
    meter = AverageMeter()
    model.train()
    for (x, y), ((weak, strong), _) in zip(labeled, unlabeled):
        x, y, weak, strong = x.cuda(), y.cuda(), weak.cuda(), strong.cuda()
        with torch.autocast("cuda", enabled=args.amp):
            targets_u, mask = guess_labels(model, weak, args.threshold)
            logits = model(torch.cat((x, strong)))
            logits_x, logits_u = logits[: x.shape[0]], logits[x.shape[0]:]
            loss = F.cross_entropy(logits_x, y) + (F.cross_entropy(logits_u, targets_u, reduction="none") * mask).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        meter.update(loss.item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--threshold", type=float, default=0.95)
    args = parser.parse_args()
    model = build_wideresnet(10).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    labeled, unlabeled = torch.load("data/labeled.pt"), torch.load("data/unlabeled.pt")
    train(args, labeled, unlabeled, model, optimizer, scaler)


if __name__ == "__main__":
    main()
