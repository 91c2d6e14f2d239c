from .features import extract_features
