from .core import Brain, Stage
