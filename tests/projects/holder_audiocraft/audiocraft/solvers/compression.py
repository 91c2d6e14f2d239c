import torch
import torch.nn.functional as F

from audiocraft.adversarial.losses import adversarial_loss, feature_matching_loss
from audiocraft.models.encodec import EncodecModel, MultiScaleDiscriminator
from audiocraft.solvers.base import StandardSolver
from audiocraft.utils.autocast import TorchAutocast


class CompressionSolver(StandardSolver):
    def build_model(self):
        self.model = EncodecModel().to(self.device)
        self.discriminator = MultiScaleDiscriminator().to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=3e-4, betas=(0.5, 0.9))
        self.autocast = TorchAutocast(enabled=self.cfg.autocast, device_type=self.device, dtype=torch.float16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.cfg.autocast)

    def run_step(self, idx, batch, metrics):
        x = batch.to(self.device)
        with self.autocast:
            y = self.model(x)
            fake_logits, fmap_fake = self.discriminator(y)
            _, fmap_real = self.discriminator(x)
            loss = F.l1_loss(y, x) + adversarial_loss(fake_logits) + feature_matching_loss(fmap_real, fmap_fake)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        metrics["loss"] = loss.item()
        return metrics
