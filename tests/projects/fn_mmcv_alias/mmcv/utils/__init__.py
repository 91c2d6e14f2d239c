from .ext_loader import load_ext
