"""Entry point: build a task from the command line and run it over the data."""
import argparse

import torch

from classy_vision.tasks import FineTuningTask


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    model = torch.hub.load("facebookresearch/ClassyVision", "resnet50")
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    task = FineTuningTask(model, torch.nn.CrossEntropyLoss(), optimizer, amp_enabled=args.amp)
    for sample in torch.load("train_samples.pt"):
        task.train_step(sample)


if __name__ == "__main__":
    main()
