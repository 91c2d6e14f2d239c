import torch

from moco.optimizer import LARS, lars_step


def adjust_learning_rate(optimizer, epoch, args):
    lr = args.lr * 0.5 * (1.0 + torch.cos(torch.tensor(epoch / args.epochs * 3.14159)).item())
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    return lr


def train(train_loader, model, optimizer, scaler, epoch, args):
    model.train()
    for images, _ in train_loader:
        adjust_learning_rate(optimizer, epoch, args)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(images[0].cuda(), images[1].cuda(), args.moco_m)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        lars_step(optimizer, scaler, args.grad_clip)


def main_worker(args, model, train_loader):
    optimizer = LARS(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(args.start_epoch, args.epochs):
        train(train_loader, model, optimizer, scaler, epoch, args)
        scaler.update()
