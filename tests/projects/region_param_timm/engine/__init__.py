from .train_loop import train_one_epoch, validate
