import argparse

import torch

from segment_anything import build_sam_vit_b


def main(args):
    encoder = build_sam_vit_b(args.dim, args.heads)
    tokens = torch.randn(args.batch, args.tokens, args.dim)
    valid = torch.ones(args.batch * args.heads, args.tokens, dtype=torch.bool)
    with torch.autocast(args.device, dtype=torch.bfloat16):
        return encoder(tokens, valid)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=4)
    main(parser.parse_args())
