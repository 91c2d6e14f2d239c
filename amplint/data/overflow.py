"""AMP110's tables: the fill calls it reads, where a masked score may go, which calls keep or
set a dtype, and the ops CUDA autocast runs in float32."""

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
# Methods whose result has the receiver's dtype.
KEEPS_DTYPE = {
    "cuda", "cpu", "contiguous", "view", "reshape", "transpose", "permute", "unsqueeze",
    "squeeze", "expand", "expand_as", "clone", "detach", "flatten", "repeat", "narrow", "t",
    "masked_fill", "masked_fill_", "fill_", "index_fill", "tril", "triu", "view_as",
    "reshape_as", "roll", "flip", "chunk", "split", "unflatten",
}
FLOAT_FACTORIES = {
    "torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn", "torch.eye",
    "torch.linspace",
}
# CUDA autocast runs these in float32 (its "autocast to float32" op list): their outputs are
# float32 under a CUDA region.
AUTOCAST_FP32 = {
    "softmax", "log_softmax", "cdist", "exp", "log", "cumsum", "sum", "norm", "logsumexp",
    "layer_norm", "group_norm", "pow", "prod", "cumprod", "dist", "pdist", "rsqrt",
    "reciprocal", "cosine_similarity", "normalize",
}
LIKE_FACTORIES = {"torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like",
         "torch.rand_like", "torch.randn_like"}
C10_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16"}
