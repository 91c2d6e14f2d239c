from opensora.registry import DATASETS, build_module


def main(cfg):
    dataset = build_module(cfg.dataset, DATASETS)
    return dataset
