from .core import Brain, Stage

__all__ = ["Brain", "Stage"]
