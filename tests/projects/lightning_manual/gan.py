import pytorch_lightning as pl
import torch
from torch import nn


class GAN(pl.LightningModule):
    def __init__(self, generator, discriminator, latent_dim=100):
        super().__init__()
        self.automatic_optimization = False
        self.generator = generator
        self.discriminator = discriminator
        self.latent_dim = latent_dim
        self.adversarial_loss = nn.BCELoss()

    def training_step(self, batch, batch_idx):
        imgs, _ = batch
        opt_g, opt_d = self.optimizers()
        z = torch.randn(imgs.shape[0], self.latent_dim, device=self.device)
        valid = torch.ones(imgs.size(0), 1, device=self.device)

        self.toggle_optimizer(opt_g)
        g_loss = self.adversarial_loss(self.discriminator(self.generator(z)), valid)
        self.manual_backward(g_loss)
        opt_g.step()
        opt_g.zero_grad()
        self.untoggle_optimizer(opt_g)

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=2e-4)
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=2e-4)
        return [opt_g, opt_d], []
