from .basic_loss import BCEMaskLoss, L1Loss

__all__ = ["BCEMaskLoss", "L1Loss"]
