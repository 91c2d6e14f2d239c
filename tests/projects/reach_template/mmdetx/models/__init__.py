from .builder import DETECTORS, HEADS, build_detector, build_head
from .detectors import *  # noqa: F401,F403
from .heads import *  # noqa: F401,F403
