""" The epoch loop of pytorch-image-models' train.py, kept in the package so that other
training scripts (and notebooks) can call it with their own model, loader and loss.
"""
import time
from collections import OrderedDict
from contextlib import suppress

import torch


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=None,
                    amp_autocast=suppress, loss_scaler=None, model_ema=None):
    second_order = hasattr(optimizer, 'is_second_order') and optimizer.is_second_order
    model.train()
    end = time.time()
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        input, target = input.cuda(), target.cuda()
        with torch.autocast('cuda', dtype=torch.float16):
            output = model(input)
            loss = loss_fn(output, target)
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=args.clip_grad, parameters=model.parameters(),
                        create_graph=second_order)
        else:
            loss.backward(create_graph=second_order)
            optimizer.step()
        if model_ema is not None:
            model_ema.update(model, step=num_updates)
        num_updates += 1
        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates)
        end = time.time()
    if hasattr(optimizer, 'sync_lookahead'):
        optimizer.sync_lookahead()
    return OrderedDict([('loss', loss.item())])
