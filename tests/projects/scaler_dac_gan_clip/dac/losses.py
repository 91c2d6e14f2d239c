import torch


def discriminator_loss(d_fake, d_real):
    return torch.mean(d_fake ** 2) + torch.mean((1 - d_real) ** 2)


def generator_loss(d_fake):
    return torch.mean((1 - d_fake) ** 2)


def l1_loss(x, y):
    return torch.mean(torch.abs(x - y))
