from .shape_spec import ShapeSpec

__all__ = [k for k in globals().keys() if not k.startswith("_")]
