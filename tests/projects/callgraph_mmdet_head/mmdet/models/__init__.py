from .dense_heads import AnchorHead
from .detectors import SingleStageDetector
from .necks import FPN

__all__ = ["AnchorHead", "SingleStageDetector", "FPN"]
