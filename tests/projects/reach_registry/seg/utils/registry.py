class Registry:
    def __init__(self, name):
        self.name = name
        self._modules = {}

    def register_module(self, name=None):
        def wrap(cls):
            self._modules[name or cls.__name__] = cls
            return cls
        return wrap

    def build(self, cfg):
        cfg = dict(cfg)
        return self._modules[cfg.pop("type")](**cfg)


MODELS = Registry("models")
LOSSES = Registry("losses")
