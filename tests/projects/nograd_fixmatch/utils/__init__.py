from .misc import AverageMeter, guess_labels

__all__ = ["AverageMeter", "guess_labels"]
