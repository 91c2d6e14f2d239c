from mmengine.registry import Registry

MODELS = Registry('model')
