from detectron2.config import get_cfg
from detectron2.engine import DefaultTrainer

from tensormask import TensorMask  # noqa: F401


def main(config_file):
    cfg = get_cfg()
    cfg.merge_from_file(config_file)
    trainer = DefaultTrainer(cfg)
    return trainer.train()
