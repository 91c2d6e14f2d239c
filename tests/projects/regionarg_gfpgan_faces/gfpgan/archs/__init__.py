from .gfpganv1_clean_arch import GFPGANv1Clean

__all__ = ["GFPGANv1Clean"]
