"""AMP110's tables: the fill calls it reads, where a masked score may go, which calls keep or
set a dtype (the latter from amplint.analysis.data.dtype_rules)."""

from amplint.analysis.data import dtype_rules as _R

FP16_MAX = 65504.0
BF16_MAX = 3.3895313892515355e38
# the `finfo` callables whose `.min`/`.max` of float32/float64 are the same numbers: numpy's
# `finfo(numpy.float32).min` is float32's minimum as much as torch's (espnet's MIN_VALUE)
FINFO = {"torch.finfo", "numpy.finfo"}
FINFO_MAX = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
# numpy's names of those dtypes (`numpy.finfo(numpy.float32)`, `numpy.finfo("float32")`)
NUMPY_DTYPES = {
    "numpy.float32": "float32", "numpy.single": "float32",
    "numpy.float64": "float64", "numpy.double": "float64", "numpy.float_": "float64",
}
NUMPY_DTYPE_STRINGS = {"float32": "float32", "float64": "float64", "f4": "float32", "f8": "float64"}

# Tensor method -> (position, keyword) of the fill value
METHODS = {
    "masked_fill": (1, "value"), "masked_fill_": (1, "value"), "fill_": (0, "value"),
    "index_fill": (2, "value"), "index_fill_": (2, "value"), "new_full": (1, "fill_value"),
}
IN_PLACE = {"masked_fill_", "fill_", "index_fill_"}
# torch function -> (position, keyword) of the fill value, position of the tensor it fills
FUNCTIONS = {
    "torch.masked_fill": (2, "value", 0),
    "torch.full": (1, "fill_value", None),
    "torch.full_like": (1, "fill_value", 0),
}
# Where a masked score may go with any large negative fill: the result is the same.
FEEDS_METHODS = {"softmax", "log_softmax", "max", "min", "amax", "amin", "argmax", "argmin"}
FEEDS_FUNCTIONS = {
    "torch.softmax", "torch.log_softmax", "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax", "torch.special.softmax", "torch.special.log_softmax",
    "torch.max", "torch.min", "torch.amax", "torch.amin", "torch.argmax", "torch.argmin",
}
OTHER_DTYPES = {name for name, dtype in _R.DTYPE_NAMES.items() if dtype in ("integer", "bool")}
# cast methods -> the floating dtype they give, "other" for integer/bool (the one table)
CASTS = {
    method: "other" if dtype in ("integer", "bool") else dtype
    for method, dtype in _R.CAST_METHODS.items()
}
# Which calls keep the receiver's dtype, the float factories, and the ops autocast runs in
# float32 come from the one dtype table (amplint.analysis.data.dtype_rules): methods whose result (or
# each element of whose tuple result) has the receiver's dtype
KEEPS_DTYPE = _R.KEEP | _R.TUPLE_KEEP | _R.CLAMP  # clamp: with number bounds (`x.clamp(min=-1e4)`)
FLOAT_FACTORIES = {"torch." + name for name in _R.FLOAT_FACTORIES}
LIKE_FACTORIES = {"torch." + name for name in _R.LIKE_FACTORIES}
C10_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16"}
