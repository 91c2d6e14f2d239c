"""What the dtype fact and the opener factories read once per file, not once per question (issue 34:
the cost of round 36's reach on huggingface/transformers). Counted, as tests/test_scale_ops.py
counts: the findings stay those of the questions asked each time.

The sources are shaped like a transformers modeling file (modeling_llama.py: module-level
`rotate_half`-style private helpers called from every layer, a module built at module level) and
like open_clip's precision.py (`get_autocast(precision)` returning a partial of autocast, next to
helpers that return anything else)."""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.facts import FileFacts
from amplint.analysis.facts import dtype_calls, dtype_forwards, dtype_params, dtype_walk
from amplint.analysis.facts import dtypes as dtypes_fact
from amplint.analysis.facts import opener_factories


def modeling(calls: int, rebound: bool = False) -> str:
    """A modeling file whose attention calls the private helpers `calls` times each."""
    body = "".join(f"            q{i} = _rotate_half(q.half()) + _scale(q{i - 1 if i else ''})\n"
                   for i in range(calls))
    glob = "\n\ndef _swap(norm):\n    global _final_norm\n    _final_norm = norm\n" if rebound else ""
    return f'''import torch
import torch.nn as nn

_final_norm = nn.Linear(8, 8)


def _rotate_half(x):
    x1 = x[..., :4]
    return x1.float()


def _scale(x, k=2):
    return x * k


class LlamaAttention(nn.Module):
    def forward(self, q):
        q0 = q
        with torch.autocast("cuda", dtype=torch.float16):
{body}            out = _final_norm(q)
        return out


layer = LlamaAttention()
{glob}'''


def _expression(module: cst.Module, text: str) -> cst.BaseExpression:
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseExpression) and module.code_for_node(node) == text:
            return node
        stack.extend(node.children)
    raise AssertionError(text)


def _reads(source: str, monkeypatch):
    """(whole-module binding reads, whole-module node walks, node walks of function bodies for
    their `return`s) while the file's dtype fact is built, and the fact."""
    module = cst.parse_module(source)
    facts = FileFacts(module)
    counts = {"module names": 0, "module walks": 0, "body walks": 0}
    real_names, real_nodes = dtypes_fact.assigned_names, dtype_calls.iter_nodes

    def names(node):
        if node is module:
            counts["module names"] += 1
        return real_names(node)

    def nodes(root):
        counts["module walks" if root is module else "body walks"] += 1
        return real_nodes(root)

    for place in (dtypes_fact, dtype_walk, dtype_params, dtype_forwards, dtype_calls):
        monkeypatch.setattr(place, "assigned_names", names, raising=False)
    for place in (dtype_walk, dtype_calls):  # (dtype_params and dtype_forwards read names)
        monkeypatch.setattr(place, "iter_nodes", nodes, raising=False)
    fact = facts.dtypes
    monkeypatch.undo()
    return counts, fact, module


def test_the_module_bindings_are_read_once_per_file(monkeypatch):
    """The walk's module-level modules (each reading), the bindable functions, the module
    forwards and the callees all ask how often the module binds a name: one read of its
    statements answers them all, and `global` comes from the collector's walk."""
    counts, fact, module = _reads(modeling(4), monkeypatch)
    assert fact.bindings is not None and fact.bindings.expected  # the helpers are bindable
    assert counts["module names"] == 1  # was 5: the walk's (two readings), _find, forwards, callees
    assert counts["module walks"] == 0  # was 3: `global` statements looked for


@pytest.mark.parametrize("calls", [2, 8])
def test_a_function_is_read_for_its_returns_once_however_often_it_is_called(calls, monkeypatch):
    counts, fact, module = _reads(modeling(calls), monkeypatch)
    assert fact.exact(_expression(module, "_rotate_half(q.half())")) == "float32"
    assert counts["body walks"] <= 2  # `_rotate_half` and `_scale`, not once per call (was 4n)


def test_a_module_level_module_a_function_may_rebind_is_not_seen():
    """`global _final_norm` in a function (read from the collector now) still leaves it unknown."""
    values = []
    for rebound in (False, True):
        module = cst.parse_module(modeling(1, rebound))
        values.append(FileFacts(module).dtypes.dtype(_expression(module, "_final_norm(q)")))
    assert values[0] is not None and values[1] is None


PRECISION = '''import functools
from contextlib import suppress

import torch


def get_device(name):
    return torch.device(name)


def get_input_dtype(precision):
    return torch.bfloat16 if precision == "bf16" else None


def get_autocast(precision):
    if precision == "amp":
        return functools.partial(torch.amp.autocast, device_type="cuda")
    return suppress


def train_one_epoch(model, batch, precision):
    device = get_device("cuda")
    input_dtype = get_input_dtype(precision)
    autocast = get_autocast(precision)
    with autocast():
        loss = model(batch.to(device=device, dtype=input_dtype))
    return loss
'''


def test_only_a_function_that_calls_partial_is_read_as_an_opener_factory(monkeypatch):
    read = []
    real = opener_factories.returned_values
    monkeypatch.setattr(opener_factories, "returned_values",
                        lambda node: read.append(node.name.value) or real(node))
    facts = FileFacts(cst.parse_module(PRECISION))
    ((_, frame),) = facts.tree.withs
    assert frame.region is not None and frame.region.active  # the factory still opens it
    assert read == ["get_autocast"]  # not `get_device` nor `get_input_dtype` (read before)
