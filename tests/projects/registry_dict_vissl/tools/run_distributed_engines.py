import sys

import torch
import yaml

from vissl.trainer.train_steps.standard_train_step import standard_train_step
from vissl.trainer.train_task import SelfSupervisionTask


def main(config_file):
    with open(config_file) as f:
        config = yaml.safe_load(f)["config"]
    task = SelfSupervisionTask(config)
    for sample in torch.load(config["DATA"]["path"]):
        standard_train_step(task, sample)


if __name__ == "__main__":
    main(sys.argv[1])
