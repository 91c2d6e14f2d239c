import argparse

import torch

from megatron.training import pretrain


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=50304)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--lr", type=float, default=3e-4)
    pretrain(parser.parse_args(), torch.load("data/batches.pt"))
