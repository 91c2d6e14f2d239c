from torch import nn


class EncodecModel(nn.Module):
    def __init__(self, channels=1, dimension=128):
        super().__init__()
        self.encoder = nn.Conv1d(channels, dimension, kernel_size=7, padding=3)
        self.decoder = nn.ConvTranspose1d(dimension, channels, kernel_size=7, padding=3)

    def forward(self, x):
        return self.decoder(self.encoder(x))


class MultiScaleDiscriminator(nn.Module):
    def __init__(self, channels=1, filters=32):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(channels, filters, 15, padding=7), nn.Conv1d(filters, filters, 41, padding=20)])
        self.head = nn.Conv1d(filters, 1, 3, padding=1)

    def forward(self, x):
        fmap = []
        for conv in self.convs:
            x = nn.functional.leaky_relu(conv(x), 0.2)
            fmap.append(x)
        return self.head(x), fmap
