from .engine import Engine
from .image import ImageSoftmaxEngine

__all__ = ["Engine", "ImageSoftmaxEngine"]
