from .train_loop import AMPTrainer

__all__ = ["AMPTrainer"]
