"""A recipe's training script: a dry run over the largest batches to find OOMs before training
(its backward is unscaled and its gradients are cleared), then the AMP training loop."""

import torch

from icefall.utils import create_grad_scaler, torch_autocast


def compute_loss(params, model, batch):
    return model(batch["inputs"]).sum() / params.scale


def train_one_epoch(params, model, optimizer, train_dl, scaler):
    model.train()
    for batch_idx, batch in enumerate(train_dl):
        try:
            with torch_autocast(enabled=params.use_autocast, dtype=params.dtype):
                loss = compute_loss(params, model, batch)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        except Exception:
            raise


def scan_pessimistic_batches_for_oom(model, train_dl, optimizer, params):
    for batch in train_dl.pessimistic_batches():
        try:
            with torch_autocast(enabled=params.use_autocast, dtype=params.dtype):
                loss = compute_loss(params, model, batch)
            loss.backward()
            optimizer.zero_grad()
        except Exception as e:
            if "CUDA out of memory" in str(e):
                print("decrease max_duration")
            raise


def run(params, model, train_dl):
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.base_lr)
    if not params.print_diagnostics:
        scan_pessimistic_batches_for_oom(
            model=model,
            train_dl=train_dl,
            optimizer=optimizer,
            params=params,
        )
    scaler = create_grad_scaler(enabled=params.use_autocast, init_scale=1.0)
    for epoch in range(params.start_epoch, params.num_epochs + 1):
        train_one_epoch(
            params=params,
            model=model,
            optimizer=optimizer,
            train_dl=train_dl,
            scaler=scaler,
        )
