from .bf16_trainer import BF16AMPTrainer

__all__ = ["BF16AMPTrainer"]
