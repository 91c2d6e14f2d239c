from torchtune.training._steps import grad_norm, make_step_fn
from torchtune.training.precision import get_dtype

__all__ = ["get_dtype", "grad_norm", "make_step_fn"]
