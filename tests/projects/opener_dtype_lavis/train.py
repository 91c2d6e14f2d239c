import torch

from lavis.models.blip2_qformer import Blip2Qformer


def train(loader, epochs=1):
    model = Blip2Qformer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        for samples in loader:
            with model.maybe_autocast():
                loss = model(samples)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
