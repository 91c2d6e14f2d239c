import argparse

import torch
from torch.nn import functional as F

from distributed import get_rank, reduce_sum
from op import grad_norm


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


def optimizer_step(scaler, optim, model, clip):
    if clip:
        scaler.unscale_(optim)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
    scaler.step(optim)


def clip_and_step(scaler, optim, model, max_norm, unscaled=False):
    if unscaled:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optim)
        return
    scaler.unscale_(optim)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optim)


def train(args, loader, generator, discriminator, g_optim, d_optim, device):
    scaler = torch.amp.GradScaler("cuda")
    for real_img in loader:
        real_img = real_img.to(device)

        requires_grad(generator, False)
        requires_grad(discriminator, True)
        noise = torch.randn(args.batch, args.latent, device=device)
        with torch.autocast("cuda"):
            fake_img = generator(noise)
            d_loss = d_logistic_loss(discriminator(real_img), discriminator(fake_img))
        discriminator.zero_grad()
        scaler.scale(d_loss).backward()
        scaler.unscale_(d_optim)
        d_norm = grad_norm(discriminator)
        optimizer_step(scaler, d_optim, discriminator, clip=False)

        requires_grad(generator, True)
        requires_grad(discriminator, False)
        with torch.autocast("cuda"):
            g_loss = g_nonsaturating_loss(discriminator(generator(noise)))
        generator.zero_grad()
        scaler.scale(g_loss).backward()
        scaler.unscale_(g_optim)
        g_norm = grad_norm(generator)
        clip_and_step(scaler, g_optim, generator, 10.0, unscaled=True)
        scaler.update()

        if get_rank() == 0:
            print(reduce_sum(d_loss).item(), float(d_norm), float(g_norm))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="StyleGAN2 trainer")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--latent", type=int, default=512)
    args = parser.parse_args()
