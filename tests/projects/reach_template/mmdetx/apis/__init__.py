from .train import train_detector
