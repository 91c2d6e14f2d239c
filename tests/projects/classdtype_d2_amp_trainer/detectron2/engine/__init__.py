from .train_loop import AMPTrainer, SimpleTrainer

__all__ = ["AMPTrainer", "SimpleTrainer"]
