"""A factory concatenated where it is made with a tensor that is float32 by construction upcasts
nothing: a dimensioned float32 tensor combined with any real operand is float32 or float64
(torch's result_type: its category and its dimension win), `torch.cat` of such tensors too, and
`torch.arange(n, dtype=torch.float)` is 1-dim (found reading fresh real trees, r17-realread:
AMP101 in facebookresearch/esm's modules.py, the sinusoidal table padded for an odd embedding
size, `torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)`, in the half model's embedding).

tests/projects/factory_esm_sinusoidal: esm layout (esm/modules.py the positional embedding,
esm/model.py the model holding it, scripts/extract.py halving the model).
amplint/analysis/facts/dtype_ops.py (a binary op with one unknown operand, `torch.cat` of a
written-out sequence, the range factories' dimension), value_meets.meets_only_float32 for a
factory used where it is made. Twins, reported: the table from integer `arange`s (the unknown
scale then leaves it unknown), the padding concatenated with a table read from
the module (its dtype unknown, half in this model); and the dtype fact leaves a 0-dim float32
tensor times an unknown operand unknown (a dimensioned half operand would win).
"""

from __future__ import annotations

import libcst as cst
import pytest

from project_files import code_findings, load

NAME = "factory_esm_sinusoidal"
MODULES = "esm/modules.py"


def amp101(*edits):
    return code_findings(load(NAME, edits), "AMP101")[0]


def test_padding_a_float32_table_is_silent():
    assert amp101() == []


@pytest.mark.parametrize("edit", [
    (", dtype=torch.float)", ")"),
    ("table = torch.cat([table, torch.zeros", "table = torch.cat([self.weights, torch.zeros"),
], ids=["integer-arange", "table-of-unknown-dtype"])
def test_twins_are_reported(edit):
    assert amp101(edit) == [(MODULES, 31, "AMP101")]


def _dtype(source, expression):
    from amplint.analysis.facts import FileFacts

    module = cst.parse_module(source)
    facts = FileFacts(module)
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseExpression) and module.code_for_node(node) == expression:
            return facts.dtypes.dtype(node)
        stack.extend(node.children)
    raise AssertionError(expression)


SOURCE = """\
import torch
def f(n, scale, parts):
    a = torch.arange(n, dtype=torch.float) * scale
    b = torch.tensor(1.0) * scale
    c = torch.cat([a, torch.zeros(n)])
    d = torch.cat([a, parts])
    e = torch.arange(n, dtype=torch.float64) + scale
    return a, b, c, d, e
"""


def test_the_dtype_fact_of_a_dimensioned_float32_operand():
    assert _dtype(SOURCE, "torch.arange(n, dtype=torch.float) * scale").options == {"float32", "float64"}
    assert _dtype(SOURCE, "torch.tensor(1.0) * scale") is None
    assert _dtype(SOURCE, "torch.cat([a, torch.zeros(n)])").options == {"float32", "float64"}
    assert _dtype(SOURCE, "torch.cat([a, parts])") is None
    assert _dtype(SOURCE, "torch.arange(n, dtype=torch.float64) + scale").options == {"float64"}


def test_the_premise_holds_in_torch():
    torch = pytest.importorskip("torch")
    table = torch.arange(4, dtype=torch.float)
    for other in (torch.ones(4, dtype=torch.float16), torch.tensor(2, dtype=torch.int64),
                  torch.tensor(2.0, dtype=torch.float64), 3, 0.5, torch.ones(4, dtype=torch.bool)):
        assert (table * other).dtype == torch.float32
    assert (table * torch.ones(4, dtype=torch.float64)).dtype == torch.float64
    assert (torch.tensor(1.0) * torch.ones(4, dtype=torch.float16)).dtype == torch.float16
    assert torch.cat([table, torch.zeros(4, dtype=torch.float16)]).dtype == torch.float32
    assert torch.cat([torch.zeros(4, dtype=torch.int64), torch.zeros(4, dtype=torch.float16)]).dtype \
        == torch.float16
