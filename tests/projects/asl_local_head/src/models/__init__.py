from .backbone import create_model

__all__ = ["create_model"]
