FEEDFORWARD_REGISTRY = {}


def register_feedforward(name):
    def register_cls(cls):
        FEEDFORWARD_REGISTRY[name] = cls
        return cls
    return register_cls


def build_feedforward(config):
    config = dict(config)
    return FEEDFORWARD_REGISTRY[config.pop("name")](**config)


from .fused_mlp import FusedMLP  # noqa: E402,F401
