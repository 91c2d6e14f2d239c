#!/usr/bin/env python3
"""PyTorch Inference Script (half precision)"""
import argparse

import torch

from timm.models.vision_transformer import vit_small_patch16_224

parser = argparse.ArgumentParser(description='PyTorch ImageNet Inference')
parser.add_argument('--fp16', action='store_true', default=False)


def main():
    args = parser.parse_args()
    model = vit_small_patch16_224(pretrained=True)
    model = model.cuda()
    if args.fp16:
        model = model.half()
    model.eval()
    with torch.no_grad():
        x = torch.randn(8, 3, 224, 224, device='cuda')
        print(model(x.half() if args.fp16 else x).argmax(-1))


if __name__ == '__main__':
    main()
