from .fused_linear_gelu import fused_linear_gelu  # noqa: F401
