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
