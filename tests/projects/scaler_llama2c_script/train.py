"""A training script: configuration, model and the loop at module level, no main()."""
import math

import torch

from model import Transformer
from monitoring import grad_norm_report

batch_size = 16
learning_rate = 5e-4
max_iters = 1000
grad_clip = 1.0
gradient_accumulation_steps = 4
dtype = "float16"
log_interval = 10

model = Transformer(dim=64, n_layers=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
ctx = torch.amp.autocast(device_type="cuda", dtype=torch.float16)


def get_lr(it):
    return learning_rate * 0.5 * (1.0 + math.cos(math.pi * it / max_iters))


iter_num = 0
while True:
    for param_group in optimizer.param_groups:
        param_group["lr"] = get_lr(iter_num)
    for micro_step in range(gradient_accumulation_steps):
        X = torch.randint(0, 32, (batch_size, 64))
        with ctx:
            loss = model(X).mean() / gradient_accumulation_steps
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    if iter_num % log_interval == 0:
        print(iter_num, grad_norm_report(model, optimizer, scaler))
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
    if iter_num > max_iters:
        break
