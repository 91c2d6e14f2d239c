from .misc import multi_apply, unmap

__all__ = ["multi_apply", "unmap"]
