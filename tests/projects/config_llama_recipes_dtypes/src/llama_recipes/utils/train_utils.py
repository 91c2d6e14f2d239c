import time

import torch

from llama_recipes.configs.training import train_config


def train(model, train_dataloader, optimizer, lr_scheduler, gradient_accumulation_steps, cfg: train_config):
    scaler = torch.amp.GradScaler("cuda")
    train_loss = []
    for epoch in range(cfg.num_epochs):
        epoch_start_time = time.perf_counter()
        model.train()
        total_loss = 0.0
        for step, batch in enumerate(train_dataloader):
            batch = {key: value.to("cuda:0") for key, value in batch.items()}
            with torch.autocast("cuda", dtype=cfg.autocast_dtype):
                loss = model(**batch).loss
            loss = loss / gradient_accumulation_steps
            total_loss += loss.detach().float()
            scaler.scale(loss).backward()
            if (step + 1) % gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        lr_scheduler.step()
        train_loss.append(total_loss / len(train_dataloader))
        print(f"Epoch {epoch + 1}: {time.perf_counter() - epoch_start_time:.1f}s")
    return train_loss
