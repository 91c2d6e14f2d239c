import torch


def train(cfg, model, criterion, optimizer, scaler, itr):
    for sample in itr:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.fp16):
            loss = criterion(model(sample["net_input"]), sample["target"])
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
