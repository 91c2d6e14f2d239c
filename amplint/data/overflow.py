"""AMP110's tables: the fill calls it reads, where a masked score may go, which calls keep or
set a dtype (the latter from amplint.data.dtype_rules)."""

from amplint.data import dtype_rules as _R

FP16_MAX = 65504.0
BF16_MAX = 3.3895313892515355e38

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
OTHER_DTYPES = {
    "torch.long", "torch.int64", "torch.int", "torch.int32", "torch.int16", "torch.short",
    "torch.int8", "torch.uint8", "torch.bool",
}
CASTS = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
    "long": "other", "int": "other", "bool": "other", "short": "other", "byte": "other",
}
# Which calls keep the receiver's dtype, the float factories, and the ops autocast runs in
# float32 come from the one dtype table (amplint.data.dtype_rules): methods whose result (or
# each element of whose tuple result) has the receiver's dtype
KEEPS_DTYPE = _R.KEEP | _R.TUPLE_KEEP
FLOAT_FACTORIES = {"torch." + name for name in _R.FLOAT_FACTORIES}
LIKE_FACTORIES = {"torch." + name for name in _R.LIKE_FACTORIES}
C10_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16"}
