from . import dreamfusion, eff_dreamfusion, magic123  # noqa: F401
