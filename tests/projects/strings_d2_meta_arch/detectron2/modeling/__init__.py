from .meta_arch import META_ARCH_REGISTRY, GeneralizedRCNN, RetinaNet, build_model

__all__ = [k for k in globals().keys() if not k.startswith("_")]
