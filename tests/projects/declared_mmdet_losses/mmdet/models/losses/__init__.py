from .contrastive_loss import contrastive_loss
from .gaussian_focal_loss import GaussianFocalLoss, gaussian_focal_loss
from .quality_targets import quality_targets
from .utils import weight_reduce_loss, weighted_loss

__all__ = [
    "contrastive_loss", "GaussianFocalLoss", "gaussian_focal_loss", "quality_targets", "weight_reduce_loss",
    "weighted_loss",
]
