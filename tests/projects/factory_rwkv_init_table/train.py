import torch

from src.model import RWKV


def main():
    model = RWKV().cuda().bfloat16()
    model.count_init_params()
    return model(torch.randn(2, 4, 32, device="cuda", dtype=torch.bfloat16))
