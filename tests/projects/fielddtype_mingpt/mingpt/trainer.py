"""
Simple training loop; Boilerplate that could apply to any arbitrary neural network,
so nothing in this file really has anything to do with GPT specifically.
"""
import torch

from mingpt.config import TrainerConfig


def run(model, batches, config: TrainerConfig):
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    scaler = torch.amp.GradScaler(config.device)
    for it, (x, y) in enumerate(batches):
        if it >= config.max_iters:
            break
        with torch.autocast(config.device, dtype=config.amp_dtype):
            logits, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
        scaler.step(optimizer)
        scaler.update()
    return model
