import argparse

import torch
import torch.nn.functional as F

from wavenet_vocoder.wavenet import WaveNet


def build_model(hparams):
    model = WaveNet(channels=hparams.residual_channels, layers=hparams.layers)
    # fp16 to fit the long receptive field in memory
    return model.half()


def train_loop(hparams, data_loader):
    model = build_model(hparams).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=hparams.lr, betas=(0.9, 0.999), eps=1e-8)
    for x, target in data_loader:
        y_hat = model(x.cuda().half())
        loss = F.cross_entropy(y_hat.float(), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--residual_channels", type=int, default=64)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    train_loop(parser.parse_args(), [])
