import pytorch_lightning as pl
import torch

from main import instantiate_from_config
from taming.modules.diffusionmodules.model import Decoder, Encoder


class VQModel(pl.LightningModule):
    def __init__(self, ddconfig, lossconfig, n_embed, embed_dim, ckpt_path=None, image_key="image"):
        super().__init__()
        self.image_key = image_key
        self.encoder = Encoder(**ddconfig)
        self.decoder = Decoder(**ddconfig)
        self.loss = instantiate_from_config(lossconfig)
        self.codebook = torch.nn.Embedding(n_embed, embed_dim)

    def forward(self, x):
        h = self.encoder(x)
        return self.decoder(h), h.pow(2).mean()

    def training_step(self, batch, batch_idx, optimizer_idx):
        x = batch[self.image_key]
        with torch.autocast("cuda", dtype=torch.float16):
            xrec, qloss = self(x)
            loss, log_dict = self.loss(qloss, x, xrec, optimizer_idx, self.global_step, split="train")
        self.log_dict(log_dict)
        return loss

    def configure_optimizers(self):
        opt_ae = torch.optim.Adam(list(self.encoder.parameters()) + list(self.decoder.parameters()), lr=4.5e-6)
        opt_disc = torch.optim.Adam(self.loss.discriminator.parameters(), lr=4.5e-6)
        return [opt_ae, opt_disc], []
