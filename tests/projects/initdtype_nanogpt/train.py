import torch

from model import GPT
from trainer import Trainer

# bfloat16 on A100s: the config's 'dtype' setting
max_iters = 10


def get_batch():
    x = torch.randint(0, 64, (4, 8))
    return x, torch.roll(x, -1, dims=1)


def main():
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    trainer = Trainer(model, optimizer, ptdtype=torch.bfloat16)
    for it in range(max_iters):
        X, Y = get_batch()
        trainer.step(X, Y)


if __name__ == "__main__":
    main()
