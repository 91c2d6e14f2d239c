import argparse
import importlib

import pytorch_lightning as pl
from omegaconf import OmegaConf


def get_obj_from_str(string, reload=False):
    module, cls = string.rsplit(".", 1)
    if reload:
        module_imp = importlib.import_module(module)
        importlib.reload(module_imp)
    return getattr(importlib.import_module(module, package=None), cls)


def instantiate_from_config(config):
    if "target" not in config:
        raise KeyError("Expected key `target` to instantiate.")
    return get_obj_from_str(config["target"])(**config.get("params", dict()))


class DataModuleFromConfig(pl.LightningDataModule):
    def __init__(self, batch_size, train=None, validation=None):
        super().__init__()
        self.batch_size = batch_size


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-b", "--base", nargs="*", default=["configs/custom_vqgan.yaml"])
    opt, unknown = parser.parse_known_args()
    config = OmegaConf.merge(*[OmegaConf.load(cfg) for cfg in opt.base])
    model = instantiate_from_config(config.model)
    data = instantiate_from_config(config.data)
    trainer = pl.Trainer(max_epochs=100)
    trainer.fit(model, data)
