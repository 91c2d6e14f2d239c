import torch
import torch.nn as nn


class AlbefPretrain(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.visual_encoder = nn.Linear(width, width)
        self.itm_head = nn.Linear(width, 2)

    def maybe_autocast(self, dtype=torch.bfloat16):
        return torch.autocast("cuda", dtype=dtype)

    def forward(self, image):
        return self.itm_head(self.visual_encoder(image)).logsumexp(-1).mean()

    def train_iters(self, loader, optimizer):
        scaler = torch.amp.GradScaler("cuda")
        for image in loader:
            with self.maybe_autocast():
                loss = self(image)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
