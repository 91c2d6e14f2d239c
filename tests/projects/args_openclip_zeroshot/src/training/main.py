import argparse

import torch

from open_clip.factory import create_model
from training.train import evaluate


def parse_args(argv=None):
    parser = argparse.ArgumentParser("zero-shot evaluation in float16")
    parser.add_argument("--model", default="ViT-B-32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=4)
    return parser.parse_args(argv)


def build_loader(args):
    images = torch.randn(args.batch_size, 3, 8, 8)
    return [(images, torch.arange(args.batch_size))]


def main(args):
    model = create_model(args.model)
    model.to(args.device)
    model.half()
    data = {"imagenet-val": build_loader(args)}
    metrics = evaluate(model, data, 0, args)
    print(metrics)
    return metrics


if __name__ == "__main__":
    main(parse_args())
