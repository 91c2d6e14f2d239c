import math
import sys

import torch


def compute_loss(output, label):
    return 1.0 - torch.nn.functional.cosine_similarity(output.float(), label.float(), dim=-1).mean()


def train_one_epoch(model, teacher, data_loader, optimizer, device, epoch, loss_scaler=None,
                    max_norm=0, fp16=True, beit_like=True):
    model.train()
    for step, (batch, _) in enumerate(data_loader):
        samples, images, bool_masked_pos = batch
        images = images.to(device, non_blocking=True)
        samples = samples.to(device, non_blocking=True)
        bool_masked_pos = bool_masked_pos.to(device, non_blocking=True)

        if loss_scaler is None:
            if fp16:
                samples = samples.half()
            else:
                samples = samples.bfloat16()

        if beit_like:
            with torch.no_grad(), torch.cuda.amp.autocast():
                clip_features = teacher.infer_image({"image": [images]})
                labels = clip_features[bool_masked_pos.flatten(1).to(torch.bool)]

            if loss_scaler is None:
                outputs = model(samples, bool_masked_pos=bool_masked_pos)
            else:
                with torch.cuda.amp.autocast():
                    outputs = model(samples, bool_masked_pos=bool_masked_pos)
            loss = compute_loss(outputs, labels)
        else:
            with torch.no_grad(), torch.cuda.amp.autocast():
                clip_features = teacher.infer_image({"image": [images]})
            if loss_scaler is None:
                loss = model(samples, clip_features)
            else:
                with torch.cuda.amp.autocast():
                    loss = model(samples, clip_features)

        loss_value = loss.item()
        if not math.isfinite(loss_value):
            sys.exit(1)

        if loss_scaler is None:
            model.backward(loss)
            model.step()
        else:
            optimizer.zero_grad()
            loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=model.parameters())
