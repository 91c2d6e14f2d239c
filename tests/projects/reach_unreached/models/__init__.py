from .net import Net
