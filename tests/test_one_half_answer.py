"""One answer to "may this value be half?" (issue 26: every rule reads the dtype fact, no rule
keeps its own table). AMP101's buffer writes and meetings read facts/half_evidence.py, which asks
the dtype fact first and torch's lower-precision list of the region's own device; the escape walk
(AMP105/111) asks the same `lowers_here`. Where the old private predicates disagreed with the fact,
each test runs the code under torch 2.13 (CPU autocast) to show which answer is right."""

from __future__ import annotations

import importlib
import warnings

import pytest

from amplint.analysis.engine import Settings, lint_source

torch = pytest.importorskip("torch")


def codes(source, code):
    settings = Settings(frozenset({code}))
    return [(d.line, d.code) for d in lint_source("case.py", source, settings).diagnostics]


def run(source, **env):
    scope = {"torch": torch, **env}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "case.py", "exec"), scope)
    return scope


# -- the private tables are gone --------------------------------------------------------------
@pytest.mark.parametrize("module,names", [
    ("amplint.analysis.facts.buffer_writes",
     ("maybe_half", "half_under_autocast", "HALF_UNDER_AUTOCAST_OPS", "_MODULE_NAME", "_SPLITS",
      "_ELEMENTWISE", "_is_module_callee")),
    ("amplint.analysis.facts.value_meets", ("_NOT_HALF", "_is_module_callee", "half_under_autocast")),
    ("amplint.analysis.facts.float32_flow", ("_NOT_HALF",)),
])
def test_rules_keep_no_private_half_tables(module, names):
    loaded = importlib.import_module(module)
    assert [name for name in names if hasattr(loaded, name)] == []


def test_one_half_origin_and_one_keep_attribute_table():
    from amplint.analysis.data import dtype_rules as R
    from amplint.analysis.facts import escape, half_evidence, value_meets

    assert value_meets.half_origin is half_evidence.half_origin
    # the table's attributes (`.H`, `.mH` too), less `.grad`: a region's output is a non-leaf
    assert escape.KEEP_ATTRS == R.KEEP_ATTRS - {"grad"}


# -- the region's device decides which ops lower (AMP101 and AMP105 agree) ----------------------
MV = (
    "import torch\n"
    "def pool(a, v, mask):\n"
    "    with torch.autocast({device!r}):\n"
    "        y = torch.mv(a, v)\n"
    "        out = torch.zeros(4)\n"
    "        out[mask] = y[mask]\n"
    "        return out\n"
)


def test_mv_under_cpu_autocast_is_float32_and_writes_fine():
    """`torch.mv` is on CUDA's lower-precision list, not CPU's: under CPU autocast it stays
    float32 and the write into the float32 buffer raises nothing (AMP101 said it raises)."""
    scope = run(MV.format(device="cpu"))
    a, v = torch.randn(4, 4), torch.randn(4)
    mask = torch.tensor([True, False, True, False])
    assert scope["pool"](a, v, mask).dtype == torch.float32
    with torch.autocast("cpu"):
        assert torch.mv(a, v).dtype == torch.float32
        assert torch.mm(a, a).dtype == torch.bfloat16
    assert codes(MV.format(device="cpu"), "AMP101") == []
    assert codes(MV.format(device="cuda"), "AMP101") == [(5, "AMP101")]
    mm = MV.format(device="cpu").replace("torch.mv(a, v)", "torch.mm(a, a)[0]")
    assert codes(mm, "AMP101") == [(5, "AMP101")]
    with pytest.raises(RuntimeError, match="Index put requires"):
        run(mm)["pool"](a, v, mask)


ESCAPE = (
    "import torch\n"
    "w = torch.randn(4, 4)\n"
    "with torch.autocast({device!r}):\n"
    "    y = torch.{op}\n"
    "out = torch.mm(y[None], w)\n"
)


def test_amp105_and_amp101_read_the_same_device_lists():
    """The escape walk (AMP105) asks the same `lowers_here` as AMP101: `torch.mv` escaping a
    CPU region is float32 and meets float32 fine; `torch.mm`'s row is bfloat16 and raises;
    `torch.mv` under CUDA autocast is float16. Both rules give the same answer for the value."""
    a, v = torch.randn(4, 4), torch.randn(4)
    fine = ESCAPE.format(device="cpu", op="mv(a, v)")
    assert run(fine, a=a, v=v)["out"].dtype == torch.float32
    assert codes(fine, "AMP105") == []
    assert codes(ESCAPE.format(device="cuda", op="mv(a, v)"), "AMP105") == [(5, "AMP105")]
    hazard = ESCAPE.format(device="cpu", op="mm(a, a)[0]")
    with pytest.raises(RuntimeError, match="same dtype"):
        run(hazard, a=a, v=v)
    assert codes(hazard, "AMP105") == [(5, "AMP105")]
    # AMP101 on the same value, written into a float32 buffer under the region
    for device, expected in (("cpu", []), ("cuda", [(5, "AMP101")])):
        assert codes(MV.format(device=device), "AMP101") == expected


# -- the fact is the authority: a value it knows is not half is not half ------------------------
REBOUND = (
    "import torch\n"
    "import torch.nn as nn\n"
    "class Head(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.proj = nn.Linear(4, 4)\n"
    "    def forward(self, x, idx):\n"
    "        with torch.autocast('cpu'):\n"
    "            y = self.proj(x)\n"
    "            y = {cast}\n"
    "            out = torch.zeros(8, 4)\n"
    "            out[idx] = y\n"
    "            return out\n"
)


def test_a_local_rebound_to_float32_is_not_half():
    """The old walk read every binding of `y` in the function (`y = self.proj(x)` made it half
    whatever came after); the dtype fact reads them in order."""
    fixed = REBOUND.format(cast="y.float()")
    head = run(fixed)["Head"]()
    idx = torch.tensor([True] * 8)
    assert head(torch.randn(8, 4), idx).dtype == torch.float32
    assert codes(fixed, "AMP101") == []
    hazard = REBOUND.format(cast="y.relu()")
    with pytest.raises(RuntimeError, match="Index put requires"):
        run(hazard)["Head"]()(torch.randn(8, 4), idx)
    assert codes(hazard, "AMP101") == [(11, "AMP101")]


# -- AMP110: branches that disagree are no one dtype --------------------------------------------
BRANCHES = (
    "import torch\n"
    "def scores(x, mask, use_half):\n"
    "    if use_half:\n"
    "        s = x.{first}()\n"
    "    else:\n"
    "        s = x.{second}()\n"
    "    return s.masked_fill(mask, -1e9)\n"
)


@pytest.mark.parametrize("first,second", [("half", "float"), ("float", "half")])
def test_amp110_does_not_pick_the_textually_last_branch(first, second):
    """The fact joins the arms: `s` is float16 or float32. AMP110's old fallback answered from
    the last binding in the text, so one order was reported and the other not; torch raises
    on one path and not the other in both orders. No one dtype: no finding in either order."""
    scope = run(BRANCHES.format(first=first, second=second))
    x, mask = torch.randn(4), torch.tensor([True, False, True, False])
    outcomes = []
    for use_half in (True, False):
        try:
            outcomes.append(str(scope["scores"](x, mask, use_half).dtype))
        except RuntimeError as error:
            outcomes.append("raises" if "overflow" in str(error) else str(error))
    assert sorted(outcomes) == ["raises", "torch.float32"]
    assert codes(BRANCHES.format(first=first, second=second), "AMP110") == []
    only_half = BRANCHES.format(first="half", second="half")
    assert codes(only_half, "AMP110") == [(7, "AMP110")]


# -- a project: DINO's k-NN evaluation under CPU autocast ---------------------------------------
KNN = "onefact_knn_dino"
RETRIEVAL = "onefact_knn_dino/dino_knn/retrieval.py"
HAZARDS = (("torch.mv(self.bank, query)", "torch.mm(self.bank, query[:, None])[:, 0]"),
           ("emb = emb.float()", "emb = emb.relu()"))


def _knn_findings(replace=()):
    from project_files import code_findings, load

    return sorted(f[:3] for f in code_findings(load(KNN, replace), "AMP101")[0])


def _run_knn(replace=()):
    import sys
    import types

    from project_files import load

    files = load(KNN, replace)
    package = types.ModuleType("dino_knn")
    package.__path__ = []
    retrieval = types.ModuleType("dino_knn.retrieval")
    exec(compile(files[RETRIEVAL], "retrieval.py", "exec"), retrieval.__dict__)
    saved = {name: sys.modules.get(name) for name in ("dino_knn", "dino_knn.retrieval")}
    sys.modules.update({"dino_knn": package, "dino_knn.retrieval": retrieval})
    try:
        scope = run(files[KNN + "/eval_knn.py"].replace('if __name__ == "__main__":\n    main()\n', ""))
        return scope["main"]()
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def test_knn_project_under_cpu_autocast_is_clean():
    """facebookresearch/dino's eval_knn.py shape (a feature bank, votes written by a boolean
    mask, a projector head), under `torch.autocast("cpu")`: `torch.mv` stays float32 there and
    `emb = emb.float()` rebinds the head's output to float32, so both writes are fine (run
    below); main reported both."""
    votes, emb = _run_knn()
    assert votes.dtype == emb.dtype == torch.float32
    assert _knn_findings() == []


@pytest.mark.parametrize("hazard", HAZARDS)
def test_knn_project_hazard_twins_are_reported(hazard):
    with pytest.raises(RuntimeError, match="Index put requires"):
        _run_knn((hazard,))
    line = 24 if "mv" in hazard[0] else 32
    assert _knn_findings((hazard,)) == [("dino_knn/retrieval.py", line, "AMP101")]


def test_amp105_follows_the_tables_attributes():
    """`sim.mH` keeps bfloat16 (torch's KEEP_ATTRS; the escape walk knew only `.T`, `.mT`,
    `.data`) and raises in `torch.mm` with float32 weights; `.grad` of the region's non-leaf
    output is None, not a bfloat16 tensor, and stays unreported."""
    source = ("import torch\nw = torch.randn(16, 4)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n"
              "    sim = q @ k.T\nout = torch.mm(sim.mH, w)\n")
    q = torch.randn(16, 8, requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        run(source, q=q, k=torch.randn(16, 8))
    assert codes(source, "AMP105") == [(5, "AMP105")]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        sim = q @ q.T
    sim.sum().backward()
    assert sim.grad is None
    assert codes(source.replace("sim.mH", "sim.grad"), "AMP105") == []
