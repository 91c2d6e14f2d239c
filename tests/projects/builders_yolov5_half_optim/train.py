import torch

from models.yolo import Model


def smart_optimizer(model, lr=0.001, momentum=0.937):
    g = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.Adam(g, lr=lr, betas=(momentum, 0.999))


def compute_loss(pred, targets):
    return (pred - targets).pow(2).mean()


def train(hyp, loader):
    device = torch.device("cuda", 0)
    model = Model(ch=3, nc=hyp["nc"]).half().to(device)
    optimizer = smart_optimizer(model, lr=hyp["lr0"])
    for imgs, targets in loader:
        pred = model(imgs.to(device).half())
        loss = compute_loss(pred.float(), targets.to(device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
