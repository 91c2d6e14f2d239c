import argparse

import torch

from segment_anything.build_sam import build_sam_vit_b


def main(args):
    encoder = build_sam_vit_b(checkpoint=args.checkpoint).to(args.device)
    if args.half:
        encoder = encoder.half()
    images = torch.load(args.images).to(args.device)
    with torch.no_grad():
        embeddings = encoder(images.half() if args.half else images)
    torch.save(embeddings.float().cpu(), args.output)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--output", default="embeddings.pt")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--half", action="store_true")
    main(parser.parse_args())
