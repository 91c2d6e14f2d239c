"""Laid out like facebookresearch/esm's scripts/extract.py, in a fork that adds --fp16: the model
is picked by `getattr(esm.pretrained, args.model_name)()`, a positional option with neither a
default nor choices, and run under float16 autocast."""
import argparse

import torch

import esm


def create_parser():
    parser = argparse.ArgumentParser(description="Extract per-token representations")
    parser.add_argument("model_name", type=str, help="a pretrained model of esm.pretrained")
    parser.add_argument("--fp16", action="store_true")
    return parser


def run(args, batches):
    model, alphabet = getattr(esm.pretrained, args.model_name)()
    model.eval().cuda()
    with torch.no_grad():
        for tokens in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
                out = model(tokens.cuda())
            torch.save(out["representations"].float().cpu(), "out.pt")


if __name__ == "__main__":
    run(create_parser().parse_args(), [])
