"""A torch.nn module moved before it is bound (`nn.Linear(8, 8).cpu()`, `.to(device)`,
`.train()`) is the same module for the dtype fact (facts/dtype_value.py `module_moved`): its
output under autocast is the region's dtype, outside it float32. Proven by execution on CPU
with bfloat16 autocast: the index_put AMP101 reports raises, the twin outside autocast runs."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

ROUTE = (
    "import torch\n"
    "import torch.nn as nn\n"
    "def route(x, langs, device):\n"
    "    gate = nn.Linear(8, 8).to(device).train()\n"
    "    with torch.autocast('cpu', dtype=torch.bfloat16, enabled=REGION):\n"
    "        rows = [i for i, lang in enumerate(langs) if lang == 'en']\n"
    "        out = torch.zeros(x.shape[0], 8, device=x.device)\n"
    "        out[rows] = gate(x[rows])\n"
    "        return out\n"
)


def _codes(source: str):
    return [d.code for d in lint_source("route.py", source, Settings(frozenset({"AMP101"}))).diagnostics]


def _run(source: str):
    scope = {}
    exec(compile(source, "route.py", "exec"), scope)
    return scope["route"](torch.randn(3, 8), ["en", "de", "en"], "cpu")


def test_a_moved_linear_under_bfloat16_autocast_writes_half_into_a_float32_buffer():
    source = ROUTE.replace("REGION", "True")
    assert _codes(source) == ["AMP101"]
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        _run(source)


def test_the_same_routing_without_autocast_is_float32_and_silent():
    source = ROUTE.replace("REGION", "False")
    assert _codes(source) == []
    assert _run(source).dtype == torch.float32


@pytest.mark.parametrize("move", ["half()", "to(torch.float16)", "to(dtype)"])
def test_a_move_that_may_change_the_dtype_is_not_read_as_the_module(move):
    # `.half()` / `.to(<dtype>)` change the parameters: the fact must not claim the output
    source = ("import torch\nimport torch.nn as nn\n"
              f"def f(x, dtype):\n    lin = nn.Linear(8, 8).{move}\n    return lin(x)\n")
    import libcst as cst
    from amplint.analysis.facts import FileFacts

    module = cst.parse_module(source)
    facts = FileFacts(module)
    call = next(n.value for n in module.body[2].body.body[-1].body)
    assert facts.dtypes.dtype(call) is None or facts.dtypes.exact(call) != "float32"
