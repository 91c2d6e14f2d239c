import importlib
import os

LOSS_REGISTRY = {}
LOSS_NAMES = set()


def register_loss(name):
    def register_loss_cls(cls):
        if name in LOSS_REGISTRY:
            raise ValueError(f"Cannot register duplicate loss ({name})")
        LOSS_REGISTRY[name] = cls
        LOSS_NAMES.add(cls.__name__)
        return cls

    return register_loss_cls


def get_loss_module(loss_config):
    assert loss_config["name"] in LOSS_REGISTRY, f"Unknown loss: {loss_config['name']}"
    return LOSS_REGISTRY[loss_config["name"]].from_config(loss_config)


for file in sorted(os.listdir(os.path.dirname(__file__))):
    if file.endswith(".py") and not file.startswith("_"):
        importlib.import_module("vissl.losses." + file[:-3])
