from .attention import Attention
from .mlp import Mlp
