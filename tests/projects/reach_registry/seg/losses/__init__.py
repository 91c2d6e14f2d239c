from .bce_dice import BCEDice
