from realesrgan.utils import RealESRGANer

__all__ = ["RealESRGANer"]
