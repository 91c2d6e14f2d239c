"""Fine-tuning a keyword-spotting model: the recipe's own training loop, with the dry run for
OOMs imported from the sibling train.py."""

import torch

from icefall.utils import create_grad_scaler, torch_autocast
from train import compute_loss, scan_pessimistic_batches_for_oom


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


def run(params, model, train_dl):
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.base_lr)
    if not params.print_diagnostics and params.scan_for_oom_batches:
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
