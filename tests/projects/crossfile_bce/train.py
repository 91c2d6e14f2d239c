import torch
from torch.utils.data import DataLoader

from losses import FocalLoss, dice_loss
from model import UNet


def train(loader: DataLoader, epochs: int = 10):
    model = UNet().cuda()
    crit = FocalLoss(gamma=2.0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        for images, masks in loader:
            images, masks = images.cuda(), masks.cuda()
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits = model(images)
                loss = crit(logits, masks) + dice_loss(logits, masks)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
