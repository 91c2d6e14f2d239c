_model_entrypoints = {}


def register_model(fn):
    _model_entrypoints[fn.__name__] = fn
    return fn


def list_models():
    return sorted(_model_entrypoints)


def create_model(model_name, pretrained=False, **kwargs):
    create_fn = _model_entrypoints[model_name]
    return create_fn(pretrained=pretrained, **kwargs)
