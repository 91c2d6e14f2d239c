from .net import Net
from .tiny import TinyNet

ARCHS = {"net": Net, "tiny": TinyNet}


def build_model(cfg):
    if cfg.get("pretrained"):
        return _load_pretrained(cfg)
    return ARCHS[cfg["name"]](dim=cfg["dim"], num_classes=cfg["num_classes"])


def _load_pretrained(cfg):
    model = ARCHS[cfg["name"]]()
    model.load_state_dict(cfg["pretrained"])
    return model
