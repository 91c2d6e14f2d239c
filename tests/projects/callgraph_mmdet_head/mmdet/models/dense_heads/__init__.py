from .anchor_head import AnchorHead
