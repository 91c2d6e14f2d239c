from .archs import *  # noqa: F401,F403
from .utils import GFPGANer  # noqa: F401
