import torch

from losses import BCEDice
from models import Net


def finetune(loader, checkpoint):
    model = Net.from_pretrained(checkpoint, num_classes=4).cuda()
    criterion = BCEDice()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for x, mask, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x, mask), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
