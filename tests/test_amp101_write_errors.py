"""AMP101 quotes what torch raises for the write it found (r16-containers noticed every write was
quoted as the index-put error, which `index_add_` does not raise). The table
(amplint/analysis/data/write_errors.py) is checked against torch itself, each message is
quoted by the rule for its own write."""

from __future__ import annotations

import pytest

from amplint.analysis.data.write_errors import HALF_NAMES, INDEX_PUT, METHOD_ERRORS, OUT_ERROR
from amplint.analysis.engine import Settings, lint_source

WRITES = {
    "index_put_": "buf.index_put_((idx,), h)",
    "index_add_": "buf.index_add_(0, idx, h)",
    "index_copy_": "buf.index_copy_(0, idx, h)",
    "scatter_": "buf.scatter_(0, where, h)",
    "scatter_add_": "buf.scatter_add_(0, where, h)",
    "scatter_reduce_": "buf.scatter_reduce_(0, where, h, 'sum')",
    "masked_scatter_": "buf.masked_scatter_(mask, h)",
    "put_": "buf.put_(idx, h)",
    "setitem": "buf[idx] = h",
}


def _expected(kind: str, dtype: str) -> str:
    return INDEX_PUT if kind == "setitem" else METHOD_ERRORS[kind].format(half=HALF_NAMES[dtype])


@pytest.mark.parametrize("dtype", sorted(HALF_NAMES))
@pytest.mark.parametrize("kind", sorted(WRITES))
def test_the_table_is_what_torch_raises(kind, dtype):
    torch = pytest.importorskip("torch")
    half = getattr(torch, dtype)
    scope = {
        "buf": torch.zeros(4, 3), "h": torch.randn(2, 3).to(half), "idx": torch.tensor([0, 2]),
        "where": torch.zeros(2, 3, dtype=torch.long), "mask": torch.ones(4, 3, dtype=torch.bool),
    }
    if kind == "put_":
        scope["h"] = scope["h"][0, :2]
    if kind == "masked_scatter_":
        scope["h"] = torch.randn(12).to(half)
    with pytest.raises(RuntimeError) as raised:
        exec(WRITES[kind], scope)
    assert str(raised.value).startswith(_expected(kind, dtype)), str(raised.value)


def test_an_out_write_is_what_torch_raises():
    torch = pytest.importorskip("torch")
    h = torch.randn(2, 3).bfloat16()
    with pytest.raises(RuntimeError) as raised:
        torch.mm(h, h.t(), out=torch.zeros(2, 2))
    assert str(raised.value).startswith(OUT_ERROR.format(half="BFloat16"))


@pytest.mark.parametrize("kind", ["index_add_", "index_copy_", "scatter_add_", "setitem"])
def test_the_rule_quotes_the_error_of_its_write(kind):
    write = WRITES[kind].replace("buf", "acc")
    source = (
        "import torch\n"
        "import torch.nn as nn\n"
        "\n"
        "lin = nn.Linear(3, 3)\n"
        "\n"
        "\n"
        "def step(x, idx, where, n):\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "        h = lin(x)\n"
        "        acc = torch.zeros(n, 3, device=x.device)\n"
        f"        {write}\n"
        "    return acc\n"
    )
    (diagnostic,) = lint_source("t.py", source, Settings(frozenset({"AMP101"}))).diagnostics
    assert diagnostic.message.endswith(f"that raises '{_expected(kind, 'bfloat16')}'"), diagnostic.message
