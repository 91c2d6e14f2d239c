import torch

from configs import base as cfg
from losses import BCEDice
from models import build_model


def main(loader):
    model = build_model(cfg.model).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), **cfg.optimizer)
    scaler = torch.amp.GradScaler("cuda")
    criterion = BCEDice().cuda()
    for _ in range(cfg.epochs):
        for x, mask, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x, mask), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
