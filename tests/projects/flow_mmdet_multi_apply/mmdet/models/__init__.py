from .dense_heads import AnchorHead  # noqa: F401
from .detectors import SingleStageDetector  # noqa: F401
