import argparse
import math

import torch

from taming.util import load_vqgan


def main(args, loader):
    model = load_vqgan(args.ckpt)
    sq_sum, n = 0.0, 0
    with torch.no_grad():
        for images in loader:
            h = model.encode(images.half())
            sq_sum += (h * h).sum().item()
            n += h.numel()
    print(f"latent rms {math.sqrt(sq_sum / max(n, 1)):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", default=None)
    main(parser.parse_args(), [])
