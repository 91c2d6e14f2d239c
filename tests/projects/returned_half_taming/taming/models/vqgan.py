import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, ch=64, z_channels=256):
        super().__init__()
        self.conv_in = nn.Conv2d(3, ch, 3, padding=1)
        self.down = nn.Conv2d(ch, ch, 4, stride=2, padding=1)
        self.conv_out = nn.Conv2d(ch, z_channels, 3, padding=1)

    def forward(self, x):
        return self.conv_out(self.down(self.conv_in(x).relu()).relu())


class VQModel(nn.Module):
    def __init__(self, embed_dim=256, n_embed=1024):
        super().__init__()
        self.encoder = Encoder(z_channels=embed_dim)
        self.quant_conv = nn.Conv2d(embed_dim, embed_dim, 1)
        self.embedding = nn.Embedding(n_embed, embed_dim)

    def encode(self, x):
        return self.quant_conv(self.encoder(x))
