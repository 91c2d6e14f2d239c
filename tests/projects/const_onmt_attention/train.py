import argparse

import torch

from onmt.encoder import TransformerEncoder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="train.pt")
    parser.add_argument("--steps", type=int, default=1000)
    opt = parser.parse_args()
    model = TransformerEncoder(6, 512, 8, 2048, 0.1, 32000).cuda()
    generator = torch.nn.Linear(512, 32000).cuda()
    optim = torch.optim.Adam(list(model.parameters()) + list(generator.parameters()), lr=2e-4)
    scaler = torch.amp.GradScaler("cuda")
    for step, (src, tgt) in enumerate(torch.load(opt.data)):
        if step >= opt.steps:
            break
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            logits = generator(model(src.cuda()))
            loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), tgt.cuda().view(-1))
        optim.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optim)
        scaler.update()


if __name__ == "__main__":
    main()
