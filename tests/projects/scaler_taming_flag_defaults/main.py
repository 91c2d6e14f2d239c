import argparse

import torch

from taming.models.cond_transformer import Net2NetTransformer
from taming.models.vqgan import VQModel


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stage", type=int, default=1)
    parser.add_argument("--max_steps", type=int, default=1000)
    return parser


def main():
    opt = get_parser().parse_args()
    if opt.stage == 1:
        model = VQModel().cuda()
        for _ in range(opt.max_steps):
            model.training_step(torch.rand(4, 3, 64, 64, device="cuda"))
    else:
        model = Net2NetTransformer().cuda()
        for _ in range(opt.max_steps):
            idx = torch.randint(0, 1024, (4, 16), device="cuda")
            model.training_step(idx, idx)


if __name__ == "__main__":
    main()
