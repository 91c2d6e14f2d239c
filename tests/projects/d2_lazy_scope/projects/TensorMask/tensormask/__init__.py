from .arch import TensorMask
