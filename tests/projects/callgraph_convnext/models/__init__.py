from .convnext import convnext_tiny  # noqa: F401
