import torch

from . import losses
from .losses import SoftBCE


class Engine:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.criterion = SoftBCE(smoothing=0.05)
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, images, masks):
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            probs = self.model(images).sigmoid()
            loss = self.criterion(probs, masks)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss

    @torch.no_grad()
    def evaluate(self, images, masks):
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            probs = self.model(images).sigmoid()
        return losses.soft_bce(probs.float(), masks)
