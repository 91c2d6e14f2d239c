"""PointSup Training Script, laid out like detectron2's projects/PointSup/train_net.py:
importing point_sup registers PointSupRCNN in detectron2's META_ARCH_REGISTRY."""
import torch

from detectron2.engine import AMPTrainer, SimpleTrainer
from detectron2.modeling import build_model
import point_sup  # noqa: F401


def setup(args):
    from yacs.config import CfgNode
    cfg = CfgNode(new_allowed=True)
    cfg.merge_from_file(args.config_file)
    return cfg


def main(args):
    cfg = setup(args)
    model = build_model(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    trainer = (AMPTrainer if cfg.SOLVER.AMP.ENABLED else SimpleTrainer)(model, [], optimizer)
    trainer.train(0, 90000)
