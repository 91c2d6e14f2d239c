import argparse

import torch
import torch.nn.functional as F

import clip


def main(args, loader):
    device = torch.device(args.device)
    model, preprocess = clip.load(args.model, device=device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, eps=1e-6)
    scaler = torch.amp.GradScaler(device.type)
    for images, texts in loader:
        images, texts = preprocess(images.to(device)), texts.to(device)
        labels = torch.arange(images.shape[0], device=device)
        with torch.autocast(device.type, dtype=torch.float16):
            logits_per_image, logits_per_text = model(images, texts)
            loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--lr", type=float, default=5e-6)
    main(parser.parse_args(), [])
