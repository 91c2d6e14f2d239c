from .model import DAC, Discriminator
