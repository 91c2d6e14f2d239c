from ultralytics.models.sam import SAM
from ultralytics.models.yolo import YOLO

__all__ = ["SAM", "YOLO"]
