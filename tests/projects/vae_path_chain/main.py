import argparse

import torch
from torch import optim
from torch.nn import functional as F

from model import VAE

parser = argparse.ArgumentParser(description="VAE MNIST Example")
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

device = torch.device("cuda")
model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")


def loss_function(recon_x, x, mu, logvar):
    bce = F.mse_loss(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def train(epoch, batches):
    model.train()
    for data in batches:
        data = data.to(device)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    print(f"epoch {epoch} done")


if __name__ == "__main__":
    for epoch in range(1, args.epochs + 1):
        train(epoch, [torch.rand(args.batch_size, 1, 28, 28) for _ in range(4)])
