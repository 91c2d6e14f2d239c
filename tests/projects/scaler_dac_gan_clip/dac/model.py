import torch
import torch.nn as nn


class DAC(nn.Module):
    def __init__(self, latent_dim=64):
        super().__init__()
        self.encoder = nn.Conv1d(1, latent_dim, 7, padding=3)
        self.decoder = nn.Conv1d(latent_dim, 1, 7, padding=3)

    def forward(self, audio):
        z = self.encoder(audio)
        return {"audio": torch.tanh(self.decoder(z)), "vq/commitment_loss": z.pow(2).mean()}


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv1d(1, 16, 15, stride=4), nn.LeakyReLU(0.1), nn.Conv1d(16, 1, 3))

    def forward(self, audio):
        return self.convs(audio)
