from .detector import ToyDetector

__all__ = ["ToyDetector"]
