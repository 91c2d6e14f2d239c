from functools import partial

import torch
import torch.nn.functional as F

from src.helper import init_opt
from src.utils.logging import AverageMeter, grad_logger


def main(args, encoder, predictor, loader):
    use_fp16 = not args["meta"]["use_bfloat16"]
    clip_grad = args["optimization"]["clip_grad"]
    log_freq = args["logging"]["log_freq"]
    optimizer, scaler = init_opt(encoder, predictor, wd=args["optimization"]["weight_decay"],
                                 lr=args["optimization"]["lr"], use_fp16=use_fp16)
    log_grads = partial(grad_logger, scaler=scaler, optimizer=optimizer) if scaler is not None else grad_logger

    for epoch in range(args["optimization"]["epochs"]):
        loss_meter = AverageMeter()
        for itr, (imgs, target) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
                loss = F.smooth_l1_loss(predictor(encoder(imgs)), target)
            if use_fp16:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
            else:
                loss.backward()
            torch.nn.utils.clip_grad_norm_(encoder.parameters(), clip_grad)
            grad_stats = log_grads(encoder.named_parameters()) if itr % log_freq == 0 else None
            if use_fp16:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            optimizer.zero_grad()
            loss_meter.update(loss.item())
            if grad_stats is not None:
                print(f"[{epoch}, {itr}] loss {loss_meter.avg:.3f} grad {grad_stats.avg:.3e}")
