import torch
import torch.nn as nn
import torch.nn.functional as F


class DummyLoss(nn.Module):
    def __init__(self):
        super().__init__()


class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc=3, ndf=64):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(ndf, 1, 4, 1, 1))

    def forward(self, x):
        return self.main(x)


class VQWithDiscriminator(nn.Module):
    def __init__(self, disc_start, codebook_weight=1.0, disc_factor=1.0):
        super().__init__()
        self.codebook_weight = codebook_weight
        self.discriminator = NLayerDiscriminator()
        self.discriminator_iter_start = disc_start
        self.disc_factor = disc_factor

    def forward(self, codebook_loss, inputs, reconstructions, optimizer_idx, global_step, split="train"):
        rec_loss = torch.abs(inputs.contiguous() - reconstructions.contiguous()).mean()
        logits_fake = self.discriminator(reconstructions.contiguous())
        if optimizer_idx == 0:
            g_loss = -torch.mean(logits_fake)
            loss = rec_loss + g_loss + self.codebook_weight * codebook_loss.mean()
            return loss, {f"{split}/rec_loss": rec_loss.detach()}
        logits_real = self.discriminator(inputs.contiguous().detach())
        real = F.binary_cross_entropy(torch.sigmoid(logits_real), torch.ones_like(logits_real))
        fake = F.binary_cross_entropy(torch.sigmoid(logits_fake.detach()), torch.zeros_like(logits_fake))
        d_loss = self.disc_factor * 0.5 * (real + fake)
        return d_loss, {f"{split}/disc_loss": d_loss.detach()}
