import torch
from torch import nn

from taming.modules.amp import AmpMixin


class VQModel(AmpMixin, nn.Module):
    def __init__(self, embed_dim=256, n_embed=1024, learning_rate=4.5e-6):
        super().__init__()
        self.encoder = nn.Conv2d(3, embed_dim, 4, 4)
        self.quantize = nn.Embedding(n_embed, embed_dim)
        self.decoder = nn.ConvTranspose2d(embed_dim, 3, 4, 4)
        self.discriminator = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4, 1, 1))
        self.learning_rate = learning_rate
        self.opt_ae, self.opt_disc = self.configure_optimizers()
        self.setup_amp()

    def configure_optimizers(self):
        lr = self.learning_rate
        opt_ae = torch.optim.Adam(
            list(self.encoder.parameters()) + list(self.decoder.parameters()) + list(self.quantize.parameters()),
            lr=lr, betas=(0.5, 0.9))
        opt_disc = torch.optim.Adam(self.discriminator.parameters(), lr=lr, betas=(0.5, 0.9))
        return opt_ae, opt_disc

    def forward(self, x):
        h = self.encoder(x)
        return self.decoder(h), h.pow(2).mean()

    def training_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            xrec, qloss = self(batch)
            rec_loss = (batch - xrec).abs().mean()
            g_loss = -self.discriminator(xrec).mean()
            logits_real = self.discriminator(batch.detach())
            logits_fake = self.discriminator(xrec.detach())
            d_loss = 0.5 * (torch.relu(1.0 - logits_real).mean() + torch.relu(1.0 + logits_fake).mean())
        self.scaler.scale(rec_loss + qloss + 0.1 * g_loss + d_loss).backward()
        self.optimizer_step(self.opt_ae)
        self.optimizer_step(self.opt_disc)
        return rec_loss.detach()
