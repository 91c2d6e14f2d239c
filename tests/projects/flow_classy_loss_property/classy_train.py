import json
import sys

import torch

from classy_vision.tasks.classification_task import ClassificationTask
from classy_vision.trainer.local_trainer import LocalTrainer


def main(config_path):
    with open(config_path) as f:
        config = json.load(f)
    task = ClassificationTask.from_config(config)
    model = torch.nn.Linear(128, config["num_classes"]).cuda()
    task.set_model(model)
    task.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    LocalTrainer().train(task, torch.load(config["data"]))


if __name__ == "__main__":
    main(sys.argv[1])
