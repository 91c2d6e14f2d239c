import logging

import torch

from open_clip import distill_loss
from .precision import get_autocast, get_input_dtype


def train_one_epoch(model, teacher, data, epoch, optimizer, scaler, args):
    device = torch.device(args.device)
    autocast = get_autocast(args.precision, device_type=device.type)
    input_dtype = get_input_dtype(args.precision)
    model.train()
    for i, (images, texts) in enumerate(data):
        images = images.to(device=device, dtype=input_dtype, non_blocking=True)
        texts = texts.to(device=device, non_blocking=True)
        optimizer.zero_grad()
        with autocast():
            image_features, text_features, logit_scale = model(images, texts)
            with torch.no_grad():
                teacher_logits = teacher(images, texts)
            total_loss = distill_loss(image_features, text_features, logit_scale, teacher_logits)
        scaler.scale(total_loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if i % 100 == 0:
            logging.info(f"epoch {epoch} step {i} loss {total_loss.item():.4f}")
