from lit_gpt.model import GPT
from lit_gpt.utils import GradientAccumulator

__all__ = ["GPT", "GradientAccumulator"]
