import torch

from reward_trainer import train_step


def main(loader):
    optimizer = None
    for batch in loader:
        train_step(batch, optimizer)


if __name__ == "__main__":
    main([])
