from .backbone import build_backbone
from .meta_arch import build_model
