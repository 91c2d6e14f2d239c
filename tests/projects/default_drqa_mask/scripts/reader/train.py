import argparse

import torch

from drqa.reader.model import DocReader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab-size", type=int, default=50000)
    parser.add_argument("--embedding-dim", type=int, default=300)
    parser.add_argument("--hidden-size", type=int, default=128)
    parser.add_argument("--num-epochs", type=int, default=40)
    args = parser.parse_args()
    model = DocReader(args)
    for epoch in range(args.num_epochs):
        for ex in torch.load(f"data/train.{epoch % 4}.pt"):
            model.update(ex)


if __name__ == "__main__":
    main()
