from .clip import load, tokenize
