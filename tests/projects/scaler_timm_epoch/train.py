"""The shape of timm's train.py (huggingface/pytorch-image-models, train.py: `train_one_epoch`
with an inner `_backward(_loss)` closure that backpropagates, clips and steps, called once per
batch or per accumulation step), written here with a GradScaler instead of timm's
`NativeScaler` wrapper."""
import torch

from utils import update_summary


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, amp_autocast, scaler):
    model.train()
    for batch_idx, (input, target) in enumerate(loader):
        def _backward(_loss):
            scaler.scale(_loss).backward()
            if args.clip_grad is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            optimizer.step()

        with amp_autocast():
            output = model(input)
            loss = loss_fn(output, target)
        _backward(loss)
        scaler.update()
        optimizer.zero_grad()
    return update_summary(epoch)


def main(args, model, loader, loss_fn):
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)
    for epoch in range(args.epochs):
        train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, torch.autocast, scaler)
