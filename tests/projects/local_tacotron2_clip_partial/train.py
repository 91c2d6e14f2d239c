from functools import partial

import torch

from model import Tacotron2, Tacotron2Loss


def train(hparams, batches):
    model = Tacotron2(hparams).cuda()
    criterion = Tacotron2Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=hparams.learning_rate)
    scaler = torch.amp.GradScaler("cuda", enabled=hparams.fp16_run)
    clip_grad = partial(torch.nn.utils.clip_grad_norm_, max_norm=hparams.grad_clip_thresh)
    for x, y in batches:
        model.zero_grad()
        with torch.autocast("cuda", enabled=hparams.fp16_run):
            y_pred = model(x)
            loss = criterion(y_pred, y)
        scaler.scale(loss).backward()
        grad_norm = clip_grad(model.parameters())
        scaler.step(optimizer)
        scaler.update()
