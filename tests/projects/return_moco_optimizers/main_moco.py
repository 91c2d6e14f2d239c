import argparse

import torch
import torch.nn as nn

import moco.builder
import moco.optimizer


def main():
    parser = argparse.ArgumentParser(description="MoCo v3 ImageNet pre-training")
    parser.add_argument("--epochs", default=100, type=int)
    parser.add_argument("--lr", default=0.6, type=float)
    parser.add_argument("--moco-m", default=0.99, type=float)
    parser.add_argument("--print-freq", default=10, type=int)
    parser.add_argument("--amp", action="store_true")
    args = parser.parse_args()
    model = moco.builder.MoCo_ResNet(nn.Identity, dim=256, mlp_dim=4096, T=0.2).cuda()
    optimizers = moco.optimizer.build_optimizers(model, args)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    train_loader = torch.utils.data.DataLoader(range(8))
    model.train()
    for epoch in range(args.epochs):
        for i, (images, _) in enumerate(train_loader):
            images[0] = images[0].cuda(non_blocking=True)
            images[1] = images[1].cuda(non_blocking=True)
            with torch.autocast("cuda", enabled=args.amp):
                loss = model(images[0], images[1], args.moco_m)
            for optimizer in optimizers:
                optimizer.zero_grad()
            scaler.scale(loss).backward()
            for optimizer in optimizers:
                scaler.step(optimizer)
                scaler.update()
            if i % args.print_freq == 0:
                print(f"epoch {epoch} iter {i} loss {loss.item():.4f}")
        for optimizer in optimizers:
            print(optimizer.param_groups[0]["lr"])


if __name__ == "__main__":
    main()
