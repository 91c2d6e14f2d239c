"""The dtype fact (amplint.analysis.facts.dtypes) proven by execution (issue 26).

Hypothesis builds small straight-line torch programs (factories, casts, dtype-keeping methods,
reductions, binary arithmetic with tensors and Python numbers (`math.sqrt(4)` too), matmuls, functional ops, module
calls, calls of the program's own functions, whose returns the fact reads per call and whose
parameters it binds from every call site (private helpers, a nested function, a private method),
`if` branches), partly inside `torch.autocast("cpu", dtype=torch.bfloat16)` (and
`enabled=False` inside it). Each program runs under a TorchFunctionMode that records the dtype
every source expression produces (tests/dtype_recorder.py); the fact's prediction for that
expression must contain what ran, and equal it when it names one dtype. Unknown is allowed; a
wrong dtype is a failure. The fixtures run too, where they run on CPU. Derandomized."""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dtype_recorder import compare, predictions, record

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

DEVICE = os.environ.get("AMPLINT_DTYPE_DEVICE", "cpu")  # "cuda" on a GPU machine
REGION_DTYPE = "bfloat16" if DEVICE == "cpu" else "float16"
REGION = f'torch.autocast("{DEVICE}", dtype=torch.{REGION_DTYPE})'
NAMES = ["a", "b", "c", "d"]

SOURCES = [
    "torch.randn(4, 4)", "torch.zeros(4, 4)", "torch.ones(4, 4, dtype=torch.float16)",
    "torch.arange(16).view(4, 4)", "torch.tensor(2.0)", "torch.full((4, 4), 3)",
    "torch.rand(4, 4).bfloat16()", "torch.randn(4, 4, dtype=torch.float64)",
    "torch.tensor([[1, 2, 3, 4]] * 4)", "torch.randint(0, 5, (4, 4))",
]
UNARY = [
    "{x}.half()", "{x}.bfloat16()", "{x}.float()", "{x}.double()", "{x}.long()", "{x}.bool()",
    "{x}.to(torch.float16)", "{x}.to({y})", "{x}.type_as({y})", "{x}.to(dtype=torch.float32)",
    "{x}.relu()", "torch.sigmoid({x})", "{x}.t()", "{x}.view(4, 4)", "{x}.permute(1, 0)",
    "{x}.unsqueeze(0)", "{x}[0:2]", "{x}[0]", "{x}.clone()", "{x}.detach()", "-{x}",
    "{x}.abs()", "torch.exp({x})", "{x}.softmax(-1)", "F.log_softmax({x}, dim=-1)",
    "{x}.mean()", "{x}.sum()", "{x}.sum(0)", "{x}.max()", "{x}.cumsum(0)", "{x}.pow(2)",
    "{x} ** 2", "F.layer_norm({x}, (4,))", "torch.zeros_like({x})", "{x}.new_ones(4, 4)",
    "{x}.sum(dtype=torch.float32)", "F.gelu({x})", "torch.tanh({x})", "{x}.contiguous()",
    "{x}.flatten()", "F.dropout({x}, 0.0)", "lin({x})", "act({x})", "norm({x})",
    "{x}.norm()", "torch.logsumexp({x}, 0)", "{x}.prod()", "F.mse_loss({x}, {y})",
    "h_keep({x})", "h_cast({x})", "h_keep(h_keep({x}))",
]
BINARY = [
    "{x} + {y}", "{x} - {y}", "{x} * {y}", "{x} / {y}", "{x} @ {y}", "torch.mm({x}, {y})",
    "torch.matmul({x}, {y})", "F.linear({x}, {y})", "{x} * 2", "{x} + 0.5", "2 * {x}",
    "{x} / 2", "{x} > {y}", "{x} == 0", "torch.bmm({x}[None], {y}[None])",
    "torch.einsum('ij,jk->ik', {x}, {y})", "torch.maximum({x}, {y})", "torch.add({x}, {y})",
    "{x}.mul({y})", "{x}.matmul({y})", "{x}.to({y}.dtype)", "h_two({x}, {y})",
    "{x} / math.sqrt(4)", "math.pi * {x}", "{x} + math.floor(2.5)", "{x} * math.isfinite(1.0)",
]
# calls of the program's own functions, drawn often enough that most programs bind parameters
HELPERS = ["_p_head({x})", "_p_mix({x}, {y})", "heads({x})", "inner({x})", "_p_head({y})",
           "h_keep({x})", "h_two({x}, {y})"]
PRELUDE = """import math
import torch
import torch.nn.functional as F
lin = torch.nn.Linear(4, 4)
act = torch.nn.ReLU()
norm = torch.nn.LayerNorm(4)


def h_keep(t):
    return t.view(4, 4) * 2


def h_two(t, u):
    v = t @ u
    return v.relu()


def h_cast(t, k=0.5):
    return t.float() + k


def _p_head(t, k=2):
    u = t.float()
    return u.softmax(-1) * k + t.sum()


def _p_mix(t, u):
    v = t * u
    return v.mean(0) + t


class _Heads(torch.nn.Module):
    def forward(self, t):
        return self._body(t.bfloat16()) + self._body(torch.ones(4, 4))

    def _body(self, v):
        w = v * 2
        return w.float() + v.sum()


heads = _Heads()
"""
# a function defined in the program's own function (or at module level), its parameter bound
# from the program's calls of it
INNER = """def inner(t):
    w = t * t
    return w - t.mean()
"""
if DEVICE != "cpu":
    PRELUDE = PRELUDE.replace("import torch\n", f'import torch\ntorch.set_default_device("{DEVICE}")\n', 1)


@st.composite
def statement(draw):
    target = draw(st.sampled_from(NAMES))
    x, y = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES))
    kind = draw(st.sampled_from(["source", "unary", "unary", "binary", "binary", "helper", "helper"]))
    if kind == "helper":
        expr = draw(st.sampled_from(HELPERS)).format(x=x, y=y)
    elif kind == "source":
        expr = draw(st.sampled_from(SOURCES))
    elif kind == "unary":
        expr = draw(st.sampled_from(UNARY)).format(x=x, y=y)
    else:
        expr = draw(st.sampled_from(BINARY)).format(x=x, y=y)
    return f"{target} = {expr}"


@st.composite
def block(draw, depth=0):
    """Lines of a block: statements, regions, `if` branches."""
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        shape = draw(st.sampled_from(["stmt", "stmt", "stmt", "region", "if", "off"]))
        if shape == "stmt" or depth >= 2:
            lines.append(draw(statement()))
            continue
        inner = draw(block(depth + 1))
        if shape == "region":
            head = f"with {REGION}:"
        elif shape == "off":
            head = f'with torch.autocast("{DEVICE}", enabled=False):'
        else:
            head = "if flag:"
        lines.append(head)
        lines.extend("    " + line for line in inner)
    return lines


@st.composite
def program(draw):
    body = [f"{name} = torch.randn(4, 4)" for name in NAMES] + draw(block())
    in_function = draw(st.booleans())
    flag = draw(st.booleans())
    if in_function:
        body = INNER.splitlines() + body
        text = PRELUDE + "\n\ndef run(flag):\n" + "".join(f"    {line}\n" for line in body)
        return text + f"\n\nrun({flag})\n"
    return PRELUDE + "\n\n" + INNER + f"\n\nflag = {flag}\n" + "".join(line + "\n" for line in body)


TOTALS = {"programs": 0, "checked": 0, "confirmed": 0}


@settings(max_examples=200, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program())
def test_generated_programs_dtype_matches_execution(source):
    if DEVICE == "cpu":
        source = source.replace(".cuda()", "")
    observed = record(source, "<dtype-program>", {})
    checked, confirmed, failures = compare(source, observed, REGION_DTYPE)
    TOTALS["programs"] += 1
    TOTALS["checked"] += checked
    TOTALS["confirmed"] += confirmed
    assert not failures, "\n".join(failures) + "\n\n" + source


PUBLIC_TOTALS = {"programs": 0, "bound": 0}


@settings(max_examples=120, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program())
def test_public_functions_called_only_here_match_execution(source):
    """The same programs with every public function named only here (facts/local_callers.py,
    the project pass's entry when no other file mentions them): `h_keep`, `h_two`, `h_cast`,
    `inner` bound from every call of the program, as private names are."""
    from amplint.analysis.facts.local_callers import EntryCalledHere

    if DEVICE == "cpu":
        source = source.replace(".cuda()", "")
    entry = EntryCalledHere(frozenset({"h_keep", "h_two", "h_cast", "inner", "run"}))
    observed = record(source, "<dtype-program>", {})
    checked, _confirmed, failures = compare(source, observed, REGION_DTYPE, (entry,))
    PUBLIC_TOTALS["programs"] += 1
    PUBLIC_TOTALS["bound"] += len(predictions(source, (entry,))) - len(predictions(source))
    assert not failures, "\n".join(failures) + "\n\n" + source


def test_public_functions_called_only_here_are_bound():
    """Not vacuous: the entry gives the fact values it had not without it."""
    if PUBLIC_TOTALS["programs"] < 50:
        pytest.skip("run together with test_public_functions_called_only_here_match_execution")
    assert PUBLIC_TOTALS["bound"] > PUBLIC_TOTALS["programs"], PUBLIC_TOTALS


def test_generated_programs_make_predictions():
    """The proof is not vacuous: the fact names a dtype for most expressions that ran."""
    if TOTALS["programs"] < 50:
        pytest.skip("run together with test_generated_programs_dtype_matches_execution")
    assert TOTALS["confirmed"] > 5 * TOTALS["programs"], TOTALS


DECLARED_TOTALS = {"programs": 0, "checked": 0, "sets": 0}
ARGUMENTS = ["torch.randn(4, 4)", f"torch.randn(4, 4).to(torch.{REGION_DTYPE})"]


@st.composite
def declared_program(draw):
    """A function declared to run under autocast (`autocast-modules`, given to the fact as the
    project pass gives it: an entry region), called under the region with floating tensors of
    the region's dtype or float32, as its callers in declared code would."""
    body = ["a = x", "b = y", "c = torch.randn(4, 4)", "d = x * 2"] + draw(block())
    calls = draw(st.lists(st.tuples(st.sampled_from(ARGUMENTS), st.sampled_from(ARGUMENTS)),
                          min_size=1, max_size=3))
    text = PRELUDE + "\n\ndef run(x, y, flag=True):\n" + "".join(f"    {line}\n" for line in body)
    text += f"\n\nwith {REGION}:\n" + "".join(f"    run({p}, {q})\n" for p, q in calls)
    return text


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(declared_program())
def test_declared_function_parameters_match_execution(source):
    from amplint.analysis.facts.region_entries import EntryRegion
    from amplint.analysis.facts.regions import Enabled

    entries = (EntryRegion("run", Enabled.TRUE, DEVICE, REGION_DTYPE,
                           'declared to run under autocast by autocast-modules = ["prog.py"]'),)
    observed = record(source, "<declared-program>", {})
    checked, confirmed, failures = compare(source, observed, REGION_DTYPE, entries)
    predicted = predictions(source, entries)
    DECLARED_TOTALS["programs"] += 1
    DECLARED_TOTALS["checked"] += checked
    DECLARED_TOTALS["sets"] += sum(1 for v in predicted.values() if v.options == {REGION_DTYPE, "float32"})
    assert not failures, "\n".join(failures) + "\n\n" + source


def test_declared_programs_make_predictions():
    """The seeded parameters reach the predictions: most declared programs predict a
    {region dtype, float32} set somewhere, and what ran was checked against it."""
    if DECLARED_TOTALS["programs"] < 30:
        pytest.skip("run together with test_declared_function_parameters_match_execution")
    assert DECLARED_TOTALS["sets"] > 3 * DECLARED_TOTALS["programs"], DECLARED_TOTALS
    assert DECLARED_TOTALS["checked"] > 5 * DECLARED_TOTALS["programs"], DECLARED_TOTALS


FIXTURES = sorted(pathlib.Path(__file__).resolve().parent.parent.joinpath("fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_dtypes_match_execution(path):
    """Each fixture, its CUDA device names moved to CPU, runs as a module: whatever it executes
    at import (most define classes and functions only) must agree with the fact."""
    source = path.read_text(encoding="utf-8")
    if DEVICE == "cpu":
        source = source.replace('"cuda"', '"cpu"').replace("'cuda'", "'cpu'").replace(".cuda()", "")
    try:
        compile(source, str(path), "exec")
    except SyntaxError:
        pytest.skip("not Python 3.11 source")
    observed = record(source, str(path), {"__name__": "amplint_fixture"})
    _, _, failures = compare(source, observed, REGION_DTYPE)
    assert not failures, "\n".join(failures)


def test_math_scaled_values_match_execution():
    """Scores scaled by Python numbers `math` computes keep the matmul's dtype, as the fact says
    (a fixed program, so the check does not hang on what hypothesis draws)."""
    source = (
        "import math\nimport torch\n"
        "q = torch.randn(4, 4)\n"
        f"with {REGION}:\n"
        "    att = (q @ q.t()) * (1.0 / math.sqrt(q.size(-1)))\n"
        "    att2 = (q @ q.t()) / math.sqrt(4) + math.pi\n"
        "    att3 = att2 * (math.floor(2.5) ** 2)\n"
        "plain = q * math.sqrt(2) - math.log(3) * q\n"
    )
    observed = record(source, "<math-program>", {})
    checked, confirmed, failures = compare(source, observed, REGION_DTYPE)
    assert not failures, "\n".join(failures)
    # 12 on torch 2.13.0 CPU: every tensor expression, the scaled ones included (5 without
    # the `math` values: the products and sums with them were unknown)
    assert confirmed == checked >= 10, (checked, confirmed)


def test_module_forward_parameters_match_execution():
    """A module's `forward` whose parameter the fact binds from every call of its instances in
    the file (a StyleGAN-style pixel norm held by a generator, and one called where it is made):
    what the forward computes must be what the fact says, and it names a dtype there."""
    source = (
        "import torch\nfrom torch import nn\n"
        "class PixelNorm(nn.Module):\n"
        "    def forward(self, x):\n"
        "        s = (x * x).mean(dim=1, keepdim=True)\n"
        "        return x * torch.rsqrt(s + 1e-8)\n"
        "class Scale(nn.Module):\n"
        "    def forward(self, t, k=2):\n"
        "        u = t.sum(-1)\n"
        "        return u * k\n"
        "class Generator(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n"
        "        self.norm = PixelNorm()\n"
        "    def forward(self, x):\n"
        f"        with {REGION}:\n"
        "            h = self.norm(self.conv(x))\n"
        "            return Scale()(h.float()) + self.norm(x.float()).sum()\n"
        "g = Generator()\n"
        "out = g(torch.randn(2, 3, 8, 8))\n"
    )
    if DEVICE != "cpu":
        source = source.replace("g = Generator()", "g = Generator().cuda()").replace(
            "torch.randn(2, 3, 8, 8)", f'torch.randn(2, 3, 8, 8, device="{DEVICE}")')
    observed = record(source, "<module-forward-program>", {})
    checked, confirmed, failures = compare(source, observed, REGION_DTYPE)
    assert not failures, "\n".join(failures)
    predicted = predictions(source)
    lines = source.splitlines()
    inside = {lines[span[0] - 1][span[1]:span[3]]: value.options for span, value in predicted.items()
              if span[0] == span[2] and span[0] in (5, 9, 10)}
    # the pixel norm runs on the conv's bfloat16 output and on float32: both; Scale on float32
    assert inside.get("(x * x).mean(dim=1, keepdim=True)") == {REGION_DTYPE, "float32"}, inside
    assert inside.get("t.sum(-1)") == {"float32"}, inside
    assert inside.get("u * k") == {"float32"}, inside
    ran = {lines[span[0] - 1][span[1]:span[3]]: dtypes for span, dtypes in observed.items()
           if span[0] == span[2] and span[0] in (5, 9)}
    assert ran.get("(x * x).mean(dim=1, keepdim=True)") == {REGION_DTYPE, "float32"}, ran
    assert ran.get("t.sum(-1)") == {"float32"}, ran


def test_module_called_only_under_the_region_matches_execution():
    """A module-level instance called only inside the region (the p_ddpm140b shape): its
    forward surely runs under autocast, so the conv's output is the region's dtype, and so is
    the parameter of the pixel norm it feeds."""
    source = (
        "import torch\nfrom torch import nn\n"
        "class PixelNorm(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 8, 3)\n"
        "        self.norm = PixelNorm()\n"
        "    def forward(self, x):\n"
        "        h = self.conv(x)\n"
        "        return self.norm(h)\n"
        "net = Net()\n"
        "def train(x):\n"
        f"    with {REGION}:\n"
        "        return net(x).mean()\n"
        "loss = train(torch.randn(2, 3, 8, 8))\n"
    )
    if DEVICE != "cpu":
        source = source.replace("net = Net()", "net = Net().cuda()").replace(
            "torch.randn(2, 3, 8, 8)", f'torch.randn(2, 3, 8, 8, device="{DEVICE}")')
    observed = record(source, "<module-region-program>", {})
    checked, confirmed, failures = compare(source, observed, REGION_DTYPE)
    assert not failures, "\n".join(failures)
    lines = source.splitlines()
    predicted = {lines[span[0] - 1][span[1]:span[3]]: value.options
                 for span, value in predictions(source).items() if span[0] == span[2]}
    ran = {lines[span[0] - 1][span[1]:span[3]]: dtypes
           for span, dtypes in observed.items() if span[0] == span[2]}
    for text in ("self.conv(x)", "(x * x).mean(dim=1, keepdim=True)"):
        assert predicted.get(text) == {REGION_DTYPE} == ran.get(text), (text, predicted, ran)


def test_helper_called_outside_its_region_runs_float32():
    """A private helper read as surely under autocast along its region's call is also called
    outside any region (before the region, and under `enabled=False` inside it): those calls
    run float32, so the fact must not give them the region's dtype (facts/dtype_calls.py)."""
    source = (
        "import torch\n"
        "def _two(t, u):\n"
        "    v = t @ u\n"
        "    return v.relu()\n"
        "def run():\n"
        "    a = torch.randn(4, 4)\n"
        "    a = _two(a, a)\n"
        f"    with {REGION}:\n"
        "        a = _two(a, a)\n"
        "def run_off():\n"
        "    a = torch.randn(4, 4)\n"
        f"    with {REGION}:\n"
        "        a = _two(a, a)\n"
        f'        with torch.autocast("{DEVICE}", enabled=False):\n'
        "            b = _two(a.float(), a.float())\n"
        "run()\n"
        "run_off()\n"
    )
    observed = record(source, "<helper-off-program>", {})
    _, _, failures = compare(source, observed, REGION_DTYPE)
    assert not failures, "\n".join(failures)
    predicted = {(span[0], source.splitlines()[span[0] - 1][span[1]:span[3]]): value.options
                 for span, value in predictions(source).items() if span[0] == span[2]}
    # the calls under the region still name its dtype
    assert predicted.get((9, "_two(a, a)")) == {REGION_DTYPE}, predicted
    assert predicted.get((13, "_two(a, a)")) == {REGION_DTYPE}, predicted


@pytest.mark.parametrize("name", ["_last_scores", "last_scores"])
def test_helper_given_a_forward_read_along_its_region_call(name):
    """A helper every call of which surely runs under the region (bound from its calls, private
    or a public name no other file mentions, facts/local_callers.py) is given the output of a
    local instance's forward, which only the path reading values (facts/dtype_paths.py): the
    helper's body must get it, as torch records it (trl's reward head, `values[mask]`)."""
    source = (
        "import torch\nfrom torch import nn\n"
        "class ValueHead(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.v_head = nn.Linear(4, 1)\n"
        "    def forward(self, hidden, scale=1.0):\n"
        "        return self.v_head(hidden).squeeze(-1) * scale\n"
        f"def {name}(values, mask):\n"
        "    picked = values[mask]\n"
        "    return picked * 2 + values.sum()\n"
        "def train(hidden, mask):\n"
        f"    with {REGION}:\n"
        "        head = ValueHead()\n"
        "        values = head(hidden, scale=2.0)\n"
        f"        return {name}(values, mask)\n"
        "loss = train(torch.randn(3, 4), torch.tensor([True, False, True]))\n"
    )
    if DEVICE != "cpu":
        source = source.replace("head = ValueHead()", "head = ValueHead().cuda()").replace(
            "torch.randn(3, 4), torch.tensor([True, False, True])",
            f'torch.randn(3, 4, device="{DEVICE}"), torch.tensor([True, False, True], device="{DEVICE}")')
    entries = ()
    if not name.startswith("_"):  # the project pass's entry: no other file mentions it
        from amplint.analysis.facts.local_callers import EntryCalledHere

        entries = (EntryCalledHere(frozenset({name, "train"})),)
    observed = record(source, "<helper-path-program>", {})
    _, _, failures = compare(source, observed, REGION_DTYPE, entries)
    assert not failures, "\n".join(failures)
    lines = source.splitlines()
    predicted = {lines[span[0] - 1][span[1]:span[3]]: value.options
                 for span, value in predictions(source, entries).items()
                 if span[0] == span[2] and span[0] in (10, 11)}
    ran = {lines[span[0] - 1][span[1]:span[3]]: dtypes for span, dtypes in observed.items()
           if span[0] == span[2] and span[0] in (10, 11)}
    assert len(ran) == 4, ran
    for text, dtypes in ran.items():
        assert predicted.get(text) == dtypes == {REGION_DTYPE}, (text, predicted, ran)
