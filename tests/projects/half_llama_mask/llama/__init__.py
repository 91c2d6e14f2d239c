from .generation import Llama
from .model import ModelArgs, Transformer
