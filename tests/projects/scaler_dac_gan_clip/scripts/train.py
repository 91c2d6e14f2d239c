"""Train a DAC codec: generator and discriminator, one GradScaler (a fork without audiotools'
Accelerator, on torch.amp directly)."""
import argparse

import torch

from dac import DAC, Discriminator
from dac.losses import discriminator_loss, generator_loss, l1_loss


def grad_norm(module, max_norm):
    """Clip a module's gradients; the total norm is logged."""
    return torch.nn.utils.clip_grad_norm_(module.parameters(), max_norm)


def train_loop(state, batch, scaler, lambdas):
    generator, discriminator = state["generator"], state["discriminator"]
    optimizer_g, optimizer_d = state["optimizer_g"], state["optimizer_d"]
    output = {}
    signal = batch["signal"]
    with torch.autocast("cuda", dtype=torch.float16):
        out = generator(signal)
        recons = out["audio"]
        output["adv/disc_loss"] = discriminator_loss(discriminator(recons.detach()), discriminator(signal))

    optimizer_d.zero_grad()
    scaler.scale(output["adv/disc_loss"]).backward()
    scaler.unscale_(optimizer_d)
    output["other/grad_norm.d"] = torch.nn.utils.clip_grad_norm_(discriminator.parameters(), 10.0)
    scaler.step(optimizer_d)

    with torch.autocast("cuda", dtype=torch.float16):
        output["adv/gen_loss"] = generator_loss(discriminator(recons))
        output["mel/loss"] = l1_loss(recons, signal)
        output["loss"] = sum(lambdas[k] * output[k] for k in lambdas)

    optimizer_g.zero_grad()
    scaler.scale(output["loss"]).backward()
    output["other/grad_norm"] = grad_norm(generator, 1e3)
    scaler.step(optimizer_g)
    scaler.update()
    return output


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_iters", type=int, default=250000)
    args = parser.parse_args()
    generator = DAC().cuda()
    discriminator = Discriminator().cuda()
    state = {
        "generator": generator,
        "discriminator": discriminator,
        "optimizer_g": torch.optim.AdamW(generator.parameters(), lr=1e-4, betas=(0.8, 0.99)),
        "optimizer_d": torch.optim.AdamW(discriminator.parameters(), lr=1e-4, betas=(0.8, 0.99)),
    }
    scaler = torch.amp.GradScaler("cuda")
    lambdas = {"mel/loss": 15.0, "adv/gen_loss": 1.0}
    for _ in range(args.num_iters):
        batch = {"signal": torch.randn(8, 1, 8192, device="cuda")}
        train_loop(state, batch, scaler, lambdas)


if __name__ == "__main__":
    main()
