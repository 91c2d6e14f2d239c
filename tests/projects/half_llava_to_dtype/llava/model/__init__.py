from .builder import load_pretrained_model
