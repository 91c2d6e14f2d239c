from pytorch_lightning import Trainer

from gan import GAN
from nets import Discriminator, Generator

model = GAN(Generator(), Discriminator())
trainer = Trainer(accelerator="auto", devices=1, max_epochs=5, precision=16)
trainer.fit(model)
