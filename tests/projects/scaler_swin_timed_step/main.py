import argparse
import time

import torch

from config import get_config
from models import build_model
from optimizer import build_optimizer, optimizer_step
from utils.profiling import TIMINGS


def parse_option():
    parser = argparse.ArgumentParser("Swin Transformer training", add_help=False)
    parser.add_argument("--cfg", type=str, metavar="FILE", help="path to config file")
    parser.add_argument("--disable-amp", action="store_true", help="Disable pytorch amp")
    args, _ = parser.parse_known_args()
    return args, get_config(args)


def train_one_epoch(config, model, criterion, data_loader, optimizer, epoch, scaler):
    model.train()
    optimizer.zero_grad()
    start = time.time()
    for idx, (samples, targets) in enumerate(data_loader):
        samples = samples.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        with torch.autocast("cuda", enabled=config.AMP_ENABLE):
            loss = criterion(model(samples), targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.TRAIN.CLIP_GRAD)
        optimizer_step(optimizer, scaler=scaler)
        scaler.update()
        if idx % config.PRINT_FREQ == 0:
            print(f"[{epoch}][{idx}] loss {loss.item():.4f} step {TIMINGS['optimizer']:.1f}s")
    print(f"epoch {epoch}: {time.time() - start:.0f}s")


def main(config, data_loader):
    model = build_model(config).cuda()
    optimizer = build_optimizer(config, model)
    criterion = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=config.AMP_ENABLE)
    for epoch in range(config.TRAIN.EPOCHS):
        train_one_epoch(config, model, criterion, data_loader, optimizer, epoch, scaler)


if __name__ == "__main__":
    _, cfg = parse_option()
    main(cfg, [])
