from . import pretrained
from .model import ESM1, ESM2
