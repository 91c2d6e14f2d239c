__version__ = "1.7.1"
