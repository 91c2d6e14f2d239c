import sys

import torch

from apps.lm.args import TrainArgs
from lingua.optim import build_optimizer
from lingua.transformer import LMTransformer


def train(args: TrainArgs, batches, device="cuda"):
    torch.manual_seed(args.seed)
    model = LMTransformer(args.model)
    model = model.to(device=device, dtype=args.model.weight_dtype)
    optimizer = build_optimizer(model, args.optim)
    scaler = torch.amp.GradScaler(torch.device(device).type)
    for tokens in batches:
        with torch.autocast(torch.device(device).type, dtype=torch.float16):
            loss = model(tokens[:, :-1], tokens[:, 1:])
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    return model


def main(argv):
    args = TrainArgs()
    if len(argv) > 1:
        args.name = argv[1]
    return train(args, [])


if __name__ == "__main__":
    main(sys.argv)
