from .predictor import NLGPredictor

__all__ = ["NLGPredictor"]
