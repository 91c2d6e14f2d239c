from torch import nn


class Generator(nn.Module):
    def __init__(self, latent_dim=100):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(latent_dim, 784), nn.Tanh())

    def forward(self, z):
        return self.model(z).view(z.size(0), 1, 28, 28)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Flatten(), nn.Linear(784, 1), nn.Sigmoid())

    def forward(self, img):
        return self.model(img)
