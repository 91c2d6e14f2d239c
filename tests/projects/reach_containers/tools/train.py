import functools

import torch
from mmcv import Config
from mmcv.utils import build_from_cfg

from engine.loop import train_one_epoch
from losses import FocalBCE
from models import MODELS


def main(config_path, loader, epochs=10):
    cfg = Config.fromfile(config_path)
    model = build_from_cfg(cfg.model, MODELS).cuda()
    make_loss = functools.partial(FocalBCE, gamma=2.0)
    criterion = make_loss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        train_one_epoch(model, loader, optimizer, scaler, criterion)
