from .config import TrainConfig
from .model import OLMo
from .torch_util import autocast_context, barrier

__all__ = ["TrainConfig", "OLMo", "autocast_context", "barrier"]
