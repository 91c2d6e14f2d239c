import torch


def train_step(model, batch, optimizer, scaler, mixed_precision):
    t = torch.rand(batch.shape[0], device=batch.device)
    noise = torch.randn_like(batch)
    with torch.autocast("cuda", enabled=mixed_precision):
        score = model(batch + noise * t[:, None, None, None], t)
    loss = ((score.float() + noise) ** 2).mean()
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss
