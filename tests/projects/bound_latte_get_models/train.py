import argparse

import torch

from diffusion import create_diffusion
from models import get_models


def main(args):
    device = torch.device("cuda")
    model = get_models(args).to(device)
    diffusion = create_diffusion()
    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0)
    scaler = torch.amp.GradScaler("cuda")
    model.train()
    for video in torch.load(args.data_path):
        x = video.to(device, non_blocking=True)
        t = torch.randint(0, diffusion.num_timesteps, (x.shape[0],), device=device)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = diffusion.training_losses(model, x, t)["loss"]
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_max_norm)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="Latte-S/2")
    parser.add_argument("--num-frames", type=int, default=16)
    parser.add_argument("--learn-sigma", action="store_true")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--clip-max-norm", type=float, default=0.1)
    parser.add_argument("--data-path", default="data/ffs_latents.pt")
    main(parser.parse_args())
