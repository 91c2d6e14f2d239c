_MODELS = {}


def register_model(name):
    """A decorator that files a model class under `name`."""

    def _register(cls):
        if name in _MODELS:
            raise ValueError(f"Already registered model with name: {name}")
        _MODELS[name] = cls
        return cls

    return _register


def get_model(name):
    return _MODELS[name]


def create_model(config):
    model_name = config.model.name
    score_model = get_model(model_name)(config)
    return score_model.to(config.device)
