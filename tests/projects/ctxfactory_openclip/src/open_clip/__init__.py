from .loss import distill_loss
from .model import CLIP
