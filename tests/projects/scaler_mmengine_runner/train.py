"""The runner script of an mmengine project (open-mmlab/mmengine examples/distributed_training.py
shape): a Runner with an AmpOptimWrapper, whose `optim_context` is an fp16 autocast region
(mmengine/optim/optimizer/amp_optimizer_wrapper.py:189)."""
import argparse

import torch
from mmengine.runner import Runner

from models import ToyDetector


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work-dir", default="work_dirs/toy")
    return parser.parse_args()


def main():
    args = parse_args()
    runner = Runner(
        model=ToyDetector(),
        work_dir=args.work_dir,
        train_dataloader=dict(batch_size=8, dataset=dict(type="ToyDataset"),
                              sampler=dict(type="DefaultSampler", shuffle=True)),
        optim_wrapper=dict(type="AmpOptimWrapper", dtype="float16",
                           optimizer=dict(type=torch.optim.SGD, lr=0.01, momentum=0.9)),
        train_cfg=dict(by_epoch=True, max_epochs=2),
    )
    runner.train()


if __name__ == "__main__":
    main()
