import os

import torch
import torch.nn.functional as F


class DistUtils:
    @staticmethod
    def local_device():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))


class Trainer:
    def __init__(self, model, train_lr=8e-5):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=train_lr, betas=(0.9, 0.99))

    @property
    def device(self):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def train_step(self, images):
        with torch.autocast(device_type=self.device, dtype=torch.bfloat16):
            noise = torch.randn_like(images)
            loss = F.mse_loss(self.model(images + noise), noise)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.item()


@torch.no_grad()
def sample(model, batch_size=16, image_size=32):
    with torch.autocast(DistUtils.local_device().type, dtype=torch.bfloat16):
        first = model(torch.randn(batch_size, 3, image_size, image_size))
    with torch.autocast(DistUtils.local_device(), dtype=torch.bfloat16):
        return model(first)
