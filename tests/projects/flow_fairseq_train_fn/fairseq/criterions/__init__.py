from .focal_loss import FocalLossCriterion

__all__ = ["FocalLossCriterion"]
