"""One training phase (EG3D layout): zero, accumulate, unscale, clip and step its optimizer."""

import torch


def run_phase(phase, loss_fn, batch, scaler, max_norm=1.0):
    phase.opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(phase.name, phase.module, batch)
    scaler.scale(loss).backward()
    scaler.unscale_(phase.opt)
    torch.nn.utils.clip_grad_norm_(phase.module.parameters(), max_norm)
    scaler.step(phase.opt)
