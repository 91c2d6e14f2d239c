from torch import nn


def build_model(cfg):
    return nn.Linear(cfg.dim, cfg.num_labels)
