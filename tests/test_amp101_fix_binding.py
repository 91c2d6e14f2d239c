"""AMP101's safe fix `dtype=<written>.dtype` reads the written value at the factory call: it is
offered only where that name already holds the written value there (found by r16-params on
lit-llama's KV cache made in the region before `k = lin(x)`: the fix wrote `dtype=k.dtype`
above the line binding `k`, and the fixed code raised NameError)."""

from __future__ import annotations

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.parsing import parse

SETTINGS = Settings(frozenset({"AMP101"}))

HEAD = (
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "lin = nn.Linear(16, 16)\n"
    "\n"
    "\n"
)


def _lint(body: str, fix: bool = False):
    return lint_source("t.py", HEAD + body, SETTINGS, fix=fix)


def test_a_value_bound_after_the_factory_gets_no_safe_fix_but_is_reported():
    body = (
        "def step(x, pos):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        cache = torch.zeros(1, 8, 16, device=x.device)\n"
        "        k = lin(x)\n"
        "        cache.index_copy_(1, pos, k)\n"
        "    return cache\n"
    )
    result = _lint(body)
    assert [d.code for d in result.diagnostics] == ["AMP101"]
    fixed = _lint(body, fix=True).fixed_source
    assert "dtype=k.dtype" not in (fixed or "")
    parse(fixed or HEAD + body)


def test_a_value_bound_before_the_factory_keeps_its_safe_fix():
    body = (
        "def step(x, pos):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        k = lin(x)\n"
        "        cache = torch.zeros(1, 8, 16, device=x.device)\n"
        "        cache.index_copy_(1, pos, k)\n"
        "    return cache\n"
    )
    fixed = _lint(body, fix=True).fixed_source
    assert "cache = torch.zeros(1, 8, 16, device=x.device, dtype=k.dtype)" in fixed
    compile(fixed, "t.py", "exec")


def test_a_name_rebound_between_the_factory_and_the_write_gets_no_safe_fix():
    body = (
        "def step(x, pos):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        k = x.float()\n"
        "        cache = torch.zeros(1, 8, 16, device=x.device)\n"
        "        k = lin(x)\n"
        "        cache.index_copy_(1, pos, k)\n"
        "    return cache\n"
    )
    fixed = _lint(body, fix=True).fixed_source
    assert "dtype=k.dtype" not in (fixed or "")


def test_the_fixed_code_runs_and_computes_the_same_in_fp32():
    """The fix kept (k bound before) runs, and in fp32 gives what the original gives (the
    CUDA region is off on this CPU-only machine: an fp32 run)."""
    import warnings

    import pytest

    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the fp32 run needs the CUDA region off")
    warnings.simplefilter("ignore")
    body = (
        "def step(x, pos):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        k = lin(x)\n"
        "        cache = torch.zeros(1, 8, 16, device=x.device)\n"
        "        cache.index_copy_(1, pos, k)\n"
        "    return cache\n"
    )
    source = HEAD + body
    fixed = lint_source("t.py", source, SETTINGS, fix=True).fixed_source
    assert fixed is not None and "dtype=k.dtype" in fixed
    results = []
    for text in (source, fixed):
        torch.manual_seed(0)
        scope: dict = {}
        exec(compile(text, "t.py", "exec"), scope)
        x = torch.randn(1, 2, 16)
        results.append(scope["step"](x, torch.tensor([1, 5])))
    assert torch.equal(results[0], results[1])
