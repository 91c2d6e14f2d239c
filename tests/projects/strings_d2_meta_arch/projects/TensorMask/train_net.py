"""TensorMask Training Script (projects/TensorMask/train_net.py): importing tensormask
registers TensorMask in detectron2's META_ARCH_REGISTRY."""
from detectron2.config import get_cfg

from tensormask import TensorMask  # noqa: F401


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    return cfg
