from .wrappers import Conv2d
