""" Model Registry
Hacked together by / Copyright 2020 Ross Wightman
"""
_model_entrypoints = {}


def register_model(fn):
    _model_entrypoints[fn.__name__] = fn
    return fn


def list_models():
    return sorted(_model_entrypoints)


def create_model(model_name, **kwargs):
    return _model_entrypoints[model_name](**kwargs)
