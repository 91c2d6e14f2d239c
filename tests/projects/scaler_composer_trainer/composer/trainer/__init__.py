from composer.trainer.trainer import Trainer

__all__ = ["Trainer"]
