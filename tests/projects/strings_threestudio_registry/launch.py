"""Laid out like threestudio-project/threestudio: launch.py reads one YAML of configs/, builds
the system the YAML's `system_type` names from the registry (`threestudio.find`) and hands it
to a Trainer configured by the YAML's `trainer:` mapping (its `precision:` included)."""
import argparse

import pytorch_lightning as pl
from omegaconf import OmegaConf

import threestudio
from threestudio.systems.base import BaseSystem


def main(args):
    cfg = OmegaConf.load(args.config)
    system: BaseSystem = threestudio.find(cfg.system_type)(cfg.system)
    trainer = pl.Trainer(accelerator="gpu", devices=1, **cfg.trainer)
    trainer.fit(system)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    main(parser.parse_args())
