import importlib


def create_model(opt):
    module = importlib.import_module("models." + opt.model + "_model")
    cls = getattr(module, opt.model.capitalize() + "Model")
    return cls(opt)
