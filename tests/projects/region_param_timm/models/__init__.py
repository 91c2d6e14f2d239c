from .vit import VisionTransformer

_CONFIGS = {"vit_tiny": dict(dim=192, depth=12, heads=3), "vit_small": dict(dim=384, depth=12, heads=6)}


def create_model(name, num_classes=1000):
    return VisionTransformer(num_classes=num_classes, **_CONFIGS[name])
