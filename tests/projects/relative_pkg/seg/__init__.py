from .losses import SoftBCE, soft_bce

__all__ = ["SoftBCE", "soft_bce"]
