from .train_loop import AMPTrainer, SimpleTrainer
