import argparse

import torch

from llava.model import load_pretrained_model


def main(args):
    vision_tower, _ = load_pretrained_model(args, device_map=args.device, device=args.device)
    images = torch.randn(1, 3, 336, 336, device=args.device, dtype=torch.float16)
    keep = torch.ones(1, 576, dtype=torch.bool, device=args.device)
    with torch.inference_mode():
        features = vision_tower(images, keep)
    print(features.shape)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mm-vision-tower", dest="mm_vision_tower", default="openai/clip-vit-large-patch14-336")
    parser.add_argument("--mm-vision-select-layer", dest="mm_vision_select_layer", type=int, default=-2)
    parser.add_argument("--device", default="cuda")
    main(parser.parse_args())
