from .prob_focal_loss import ProbFocalLoss

__all__ = ["ProbFocalLoss"]
