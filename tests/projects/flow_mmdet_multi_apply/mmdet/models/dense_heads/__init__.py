from .anchor_head import AnchorHead

__all__ = ["AnchorHead"]
