from .sr_model import SRModel

__all__ = ["SRModel"]
