import argparse

import torch

from models.model_retrieval import ALBEF


def train(model, data_loader, optimizer, scaler, epoch, device):
    model.train()
    for i, (image, text_ids, text_mask, idx) in enumerate(data_loader):
        image, text_ids, text_mask, idx = image.to(device), text_ids.to(device), text_mask.to(device), idx.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(image, text_ids, text_mask, idx)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if i % 100 == 0:
            print(f"epoch {epoch} step {i} loss {loss.item():.4f}")


def main(args):
    device = torch.device(args.device)
    model = ALBEF().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.02)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(args.epochs):
        train(model, [], optimizer, scaler, epoch, device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=5)
    main(parser.parse_args())
