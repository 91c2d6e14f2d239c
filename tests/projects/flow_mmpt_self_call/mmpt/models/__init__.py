from .mmfusionnlg import MMFusionNLG

__all__ = ["MMFusionNLG"]
