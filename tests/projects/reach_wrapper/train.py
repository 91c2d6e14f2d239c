import os

import torch
from accelerate import Accelerator
from torch.nn.parallel import DistributedDataParallel as DDP

from engine.trainer import train_one_epoch
from losses import BCEDice
from models import Net


def main(loader):
    rank = int(os.environ["LOCAL_RANK"])
    model = DDP(Net().cuda(rank), device_ids=[rank])
    model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    train_one_epoch(model, loader, optimizer, torch.amp.GradScaler("cuda"), criterion=BCEDice())
