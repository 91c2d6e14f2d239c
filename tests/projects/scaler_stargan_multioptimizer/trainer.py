"""The epoch loop of a voice-conversion GAN trainer (written for amplint's tests)."""

import torch


class Trainer:
    def __init__(self, model, optimizer, device="cuda"):
        self.model = model
        self.optimizer = optimizer
        self.device = device

    def _train_epoch(self, loader):
        for batch in loader:
            x_real, y_org, y_trg = [b.to(self.device) for b in batch]
            self.optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                x_fake = self.model["generator"](x_real, y_trg)
                loss = self.model["discriminator"](x_fake, y_trg).float().mean()
            self.optimizer.scaler.scale(loss).backward()
            for key in ("generator", "discriminator"):
                self.optimizer.step(key=key)
