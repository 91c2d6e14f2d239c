from .builder import DETECTORS, HEADS, LOSSES, build_detector, build_head, build_loss
from .detectors import *  # noqa: F401,F403
from .heads import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
