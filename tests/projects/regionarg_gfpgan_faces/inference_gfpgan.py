import argparse
import glob
import os

import torch

from gfpgan import GFPGANer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-i", "--input", type=str, default="inputs/cropped_faces")
    parser.add_argument("-o", "--output", type=str, default="results")
    parser.add_argument("-v", "--version", type=str, default="1.3")
    parser.add_argument("-w", "--weight", type=float, default=0.5)
    args = parser.parse_args()
    restorer = GFPGANer(model_path=f"experiments/pretrained_models/GFPGANv{args.version}.pth")
    os.makedirs(args.output, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(args.input, "*.pt"))):
        restored = restorer.enhance(torch.load(path), weight=args.weight)
        torch.save(restored.cpu(), os.path.join(args.output, os.path.basename(path)))


if __name__ == "__main__":
    main()
