from fvcore.common.registry import Registry  # noqa

__all__ = ["Registry"]
