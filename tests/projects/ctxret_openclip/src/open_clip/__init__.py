from .loss import siglip_loss
from .model import CLIP
