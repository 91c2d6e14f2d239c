import torch

from training.augment import AugmentPipe


def main():
    pipe = AugmentPipe().cuda().half()
    images = torch.randn(4, 3, 32, 32, device="cuda", dtype=torch.float16)
    return pipe(images)
