import argparse

import torch
import torch.nn.functional as F

import clip


def main(args):
    device = "cuda"
    model = clip.load(args.model, device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.2)
    scaler = torch.cuda.amp.GradScaler()
    pairs = torch.load(args.pairs)
    for epoch in range(args.epochs):
        for images, captions in pairs:
            images, texts = images.to(device), clip.tokenize(captions).to(device)
            with torch.autocast("cuda", dtype=torch.float16):
                logits_per_image, logits_per_text = model(images, texts)
                labels = torch.arange(len(images), device=device)
                loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="ViT-B/32")
    parser.add_argument("--pairs", required=True)
    parser.add_argument("--lr", type=float, default=5e-6)
    parser.add_argument("--epochs", type=int, default=10)
    main(parser.parse_args())
