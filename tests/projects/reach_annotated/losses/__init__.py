from .bce_dice import BCEDice

__all__ = ["BCEDice"]
