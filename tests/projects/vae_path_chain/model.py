import torch
from torch import nn
from torch.nn import functional as F


class Standardize(nn.Module):
    def forward(self, h):
        centered = h - h.mean(dim=-1, keepdim=True)
        return centered / (centered.var(dim=-1, keepdim=True) + 1e-8).sqrt()


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.standardize = Standardize()
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = self.standardize(self.fc1(x))
        return self.fc21(F.relu(h1)), self.fc22(F.relu(h1))

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar
