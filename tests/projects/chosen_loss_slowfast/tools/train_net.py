import torch

from slowfast.models.head import MultiLabelHead


def train_epoch(loader, head, optimizer, scaler):
    for feats, labels in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = head.loss(feats.cuda(), labels.cuda())
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(loader):
    head = MultiLabelHead(2304, 400).cuda()
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    train_epoch(loader, head, optimizer, torch.amp.GradScaler("cuda"))
