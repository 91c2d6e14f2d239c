import logging

import torch

from open_clip import siglip_loss
from .precision import get_autocast, get_input_dtype


def train_one_epoch(model, data, epoch, optimizer, scaler, args):
    device = torch.device(args.device)
    input_dtype = get_input_dtype(args.precision)
    model.train()
    for i, (images, texts) in enumerate(data):
        images = images.to(device=device, dtype=input_dtype, non_blocking=True)
        texts = texts.to(device=device, non_blocking=True)
        optimizer.zero_grad()
        with get_autocast(args.precision, device_type=device.type):
            image_features, text_features, logit_scale, logit_bias = model(images, texts)
            total_loss = siglip_loss(image_features, text_features, logit_scale, logit_bias)
        scaler.scale(total_loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if i % 100 == 0:
            logging.info(f"epoch {epoch} step {i} loss {total_loss.item():.4f}")
