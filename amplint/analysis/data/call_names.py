"""Calls under an autocast region that run no model code, so the class flow does not try to
resolve their receiver: tensor methods no `nn.Module` has (`mask.min()`), and the helpers of
`unittest.TestCase` (`self.assertEqual(...)`)."""

import re

TENSOR_METHODS = frozenset({
    "min", "max", "argmin", "sum", "mean", "std", "var", "prod", "abs", "exp", "log", "sqrt",
    "pow", "sigmoid", "tanh", "round", "floor", "ceil", "sort", "any", "all", "nonzero", "long",
    "int", "bool", "numpy", "masked_select", "gather", "scatter", "repeat", "new_tensor",
})

TEST_CASE_HELPER = re.compile(r"(assert[A-Z_]\w*|fail\w*|skipTest|subTest|addCleanup)")

# method calls that run no model: the class flow leaves their receiver alone
NOT_MODULE_CALLS = frozenset({
    "parameters", "named_parameters", "state_dict", "load_state_dict", "step", "backward",
    "item", "update", "scale", "unscale_", "zero_grad", "append", "extend", "get", "items",
    "keys", "values", "format", "join", "split", "modules", "children", "named_modules",
    "buffers", "register_buffer", "register_forward_hook", "add_module", "size", "dim",
    # tensor methods no nn.Module has: the receiver is a tensor, not a model to resolve
    "view", "reshape", "transpose", "permute", "contiguous", "flatten", "numel", "chunk",
    "masked_fill", "masked_fill_", "softmax", "log_softmax", "unsqueeze", "squeeze", "expand",
    "expand_as", "clone", "detach", "new_zeros", "new_ones", "new_full", "new_empty", "matmul",
    "clamp", "argmax", "topk", "index_select", "view_as", "type_as", "unbind", "tolist",
}) | TENSOR_METHODS
