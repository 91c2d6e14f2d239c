import argparse
import itertools
import json

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from env import AttrDict
from models import Generator, MultiPeriodDiscriminator, discriminator_loss, feature_loss, generator_loss
from utils import grad_clipper


def train(h):
    device = torch.device("cuda:0")
    generator = Generator(h).to(device)
    mpd = MultiPeriodDiscriminator().to(device)
    optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
    optim_d = torch.optim.AdamW(itertools.chain(mpd.parameters()), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
    scaler = torch.amp.GradScaler("cuda", enabled=h.fp16)
    clip = grad_clipper(h)
    train_loader = DataLoader(range(16), batch_size=h.batch_size)
    generator.train()
    mpd.train()
    for epoch in range(h.training_epochs):
        for i, batch in enumerate(train_loader):
            x, y, y_mel = batch
            x, y, y_mel = x.to(device), y.to(device), y_mel.to(device)
            with torch.autocast("cuda", enabled=h.fp16):
                y_g_hat = generator(x)
                y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat.detach())
                loss_disc_all = discriminator_loss(y_df_hat_r, y_df_hat_g)
            optim_d.zero_grad()
            scaler.scale(loss_disc_all).backward()
            scaler.step(optim_d)
            with torch.autocast("cuda", enabled=h.fp16):
                loss_mel = F.l1_loss(y_mel, y_g_hat) * 45
                y_df_hat_r, y_df_hat_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
                loss_gen_all = generator_loss(y_df_hat_g) + feature_loss(fmap_f_r, fmap_f_g) + loss_mel
            optim_g.zero_grad()
            scaler.scale(loss_gen_all).backward()
            clip(generator.parameters())
            scaler.step(optim_g)
            scaler.update()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="config_v1.json")
    a = parser.parse_args()
    with open(a.config) as f:
        h = AttrDict(json.loads(f.read()))
    train(h)
