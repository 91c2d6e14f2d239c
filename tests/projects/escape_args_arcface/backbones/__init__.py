from .mobilefacenet import MobileFaceNet


def get_model(name, **kwargs):
    if name == "mbf":
        return MobileFaceNet(**kwargs)
    raise ValueError(name)
