import argparse

import torch
import yaml

from espnet2.tasks.asr import ASRTask
from espnet2.train.trainer import Trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    with open(args.config) as f:
        args.__dict__.update(yaml.safe_load(f))
    model = ASRTask.build_model(args).to("cuda")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    Trainer.run(model, optimizer, lambda epoch: torch.load(f"shards/train.{epoch}.pt"), args)


if __name__ == "__main__":
    main()
