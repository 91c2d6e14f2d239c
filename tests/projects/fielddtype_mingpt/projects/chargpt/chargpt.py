import torch

from mingpt.config import TrainerConfig
from mingpt.model import GPT
from mingpt.trainer import run


def batches(n):
    for _ in range(n):
        x = torch.randint(0, 64, (4, 8))
        yield x, torch.roll(x, -1, dims=1)


if __name__ == "__main__":
    config = TrainerConfig()
    run(GPT(), batches(config.max_iters), config)
