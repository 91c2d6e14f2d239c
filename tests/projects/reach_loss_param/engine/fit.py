import torch


def fit(model, loader, optimizer=None, criterion=None, epochs=1):
    optimizer = optimizer or torch.optim.AdamW(model.parameters())
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        for x, mask, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x, mask), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
