"""The work of each fact and rule grows linearly with the file (issue 34), counted, not timed.

A file of n blocks of training code and one of 4n: every pass over the walk's lists (calls,
assignments, frames, with statements), every LibCST `visit` and every entry the file index
steps over is counted per fact and per rule. Linear work is 4x the count; a scan per
statement (every `x[i] = name` scanning every assignment of the file, as before issue 34)
is 16x. A timing would be noise on a shared machine; the counts are exact."""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.context import FileContext
from amplint.analysis.facts import FileFacts
from amplint.analysis.facts import tree as tree_module
from amplint.analysis.facts.index import FileIndex
from amplint.analysis.parsing import parse
from amplint.analysis.rules import all_rules

HEADER = """import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast

NEG_INF = -1e9
"""

BLOCK = '''

class Attention{i}(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj{i} = nn.Linear(dim, dim)
        self.register_buffer("bias{i}", torch.zeros(dim))

    def forward(self, q, k, mask):
        with torch.autocast("cuda"):
            scores = (q @ k.transpose(-2, -1)).masked_fill(mask, -1e9)
            out = scores.softmax(-1)
        weights = out.float()
        weights[mask] = NEG_INF
        return self.proj{i}(weights)


def train_{i}(model, optimizer, loader):
    scaler = GradScaler()
    for x, y in loader:
        with autocast():
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()


def prepare_{i}(x, lengths):
    fill_{i} = -1e5
    h = x.half()
    h[lengths == 0] = fill_{i}
    y = h.masked_fill_(lengths > 3, -70000.0)
    return y.softmax(-1)


half_{i} = torch.zeros(4, dtype=torch.float16)
half_{i}[lengths_{i}] = -1e9
top_{i} = half_{i}.softmax(-1)
cast_{i} = inputs_{i}.half()
with torch.autocast("cuda"):
    result_{i} = model_{i}(cast_{i})
'''


class _Counted(list):
    """A list that counts the items every pass over it yields."""

    counter = [0]

    def __iter__(self):
        for item in list.__iter__(self):
            _Counted.counter[0] += 1
            yield item


def _operations(blocks: int, monkeypatch) -> dict:
    source = HEADER + "".join(BLOCK.format(i=i) for i in range(blocks))
    module = parse(source)
    count = _Counted.counter
    original_init = tree_module.Collector.__init__

    def counted_init(self, node):
        original_init(self, node)
        for name in ("assigns", "calls", "frames", "withs"):
            setattr(self, name, _Counted(getattr(self, name)))

    original_visit = cst.CSTNode.visit

    def counted_visit(self, visitor):
        count[0] += 1
        return original_visit(self, visitor)

    monkeypatch.setattr(tree_module.Collector, "__init__", counted_init)
    monkeypatch.setattr(cst.CSTNode, "visit", counted_visit)
    out = {}
    count[0] = 0
    facts = FileFacts(module)
    out["facts"] = count[0]
    for name in ("index", "qualified_calls", "fp16", "scalers", "defuse", "deprecated",
                 "half_values", "escape"):
        count[0] = 0
        getattr(facts, name)
        out[name] = count[0]
    ctx = FileContext("train.py", source, module, facts)
    found = 0
    for code, rule in sorted(all_rules().items()):
        count[0] = 0
        examined = facts.index.examined
        found += len(list(rule.check(ctx)))
        out[code] = count[0] + facts.index.examined - examined
    monkeypatch.undo()
    out["findings"] = found
    return out


def test_every_fact_and_rule_does_linear_work(monkeypatch):
    small = _operations(10, monkeypatch)
    large = _operations(40, monkeypatch)
    assert small["findings"] > 0 and large["findings"] >= 4 * small["findings"] * 0.9
    grown = {
        name: (small[name], large[name]) for name in small
        if name != "findings" and large[name] > 4.5 * max(small[name], 1)
    }
    assert not grown, f"work grows faster than the file (n vs 4n blocks): {grown}"


def _assignments(statements: int) -> FileFacts:
    body = "".join(f"    v{i} = {i}\n    x = v{i}\n" for i in range(statements))
    return FileFacts(parse("def f():\n" + body))


@pytest.mark.parametrize("statements", [50, 200])
def test_index_lookups_examine_a_constant_number_of_entries(statements):
    facts = _assignments(statements)
    index: FileIndex = facts.index
    function = facts.tree.module_frame.functions["f"]
    last_line = max(facts.tree.line_order.values()) + 1
    queries = 0
    for i in range(0, statements, 7):
        assert [s.targets[0].value for s in index.assigns_to(f"v{i}")] == [f"v{i}"]
        queries += 1
    site = index.last_binding_before(function, "x", last_line)
    queries += 1
    assert site is facts.tree.assigns[-1]
    assert index.examined == queries  # one entry per lookup, whatever the file's size


def test_last_binding_before_is_the_nearest_earlier_one():
    facts = _assignments(5)
    function = facts.tree.module_frame.functions["f"]
    order = facts.tree.line_order
    lines = [site.line_stmt for site in facts.tree.assigns]
    # x is bound by statements 1, 3, 5, ... (from 0): before statement 4, statement 3's
    found = facts.index.last_binding_before(function, "x", order[id(lines[4])])
    assert found is facts.tree.assigns[3]
    assert facts.index.last_binding_before(function, "x", order[id(lines[1])]) is None
    assert facts.index.last_binding_before(function, "v2", order[id(lines[5])]).value.value == "2"
    assert facts.index.last_binding_before(facts.tree.module_frame, "x", 10**6) is None


@pytest.mark.parametrize("sums", [5, 40])
def test_backward_root_check_walks_each_scope_once(sums, monkeypatch):
    """AMP141's backward-root check (rules/_backward_root.py) indexes a scope once per lint:
    module-level code with n float16 sums used as backward roots walks the module once, not n
    times (a walk per finding made it quadratic in a script or notebook)."""
    from amplint.analysis.rules import _backward_root

    built = []
    original = _backward_root._ScopeRoots.__init__

    def counted(self, scope):
        built.append(scope)
        original(self, scope)

    monkeypatch.setattr(_backward_root._ScopeRoots, "__init__", counted)
    source = "import torch\nh = inputs.half()\n" + "".join(
        f"loss_{i} = h.sum()\nloss_{i}.backward()\n" for i in range(sums))
    module = parse(source)
    facts = FileFacts(module)
    ctx = FileContext("script.py", source, module, facts)
    assert list(all_rules()["AMP141"].check(ctx)) == []  # every sum is only a backward root
    assert len(built) == 1


def _binding_operations(blocks: int, monkeypatch) -> tuple:
    """Work of finding the functions whose parameters their call sites bind
    (facts/dtype_params.Bindings): frames stepped over, nodes read, statements' names read."""

    from amplint.analysis.facts import dtype_params
    from amplint.analysis.facts import dtypes as dtypes_fact

    source = "import torch\nimport torch.nn as nn\n\n\ndef outer(x):\n" + "".join(
        f"    def _inner{i}(t):\n        return t.float()\n\n    y{i} = _inner{i}(x.half())\n"
        for i in range(blocks)) + "".join(f'''

class Base{i}(nn.Module):
    def _body{i}(self, h):
        return h * 2


class Head{i}(Base{i}):
    def _norm{i}(self, h):
        return h.softmax(-1)

    def forward(self, h):
        return self._norm{i}(self._body{i}(h.half()))


def _helper{i}(t, k=2):
    return t.float() * k


out{i} = _helper{i}(torch.ones(2).half())
''' for i in range(blocks))
    facts = FileFacts(parse(source))
    count = _Counted.counter
    count[0] = 0
    facts.tree.frames = _Counted(facts.tree.frames)
    read_nodes, read_names = dtype_params.iter_nodes, dtype_params.assigned_names
    counts = {"nodes": 0, "names": 0}

    def counted_nodes(root):
        for node in read_nodes(root):
            counts["nodes"] += 1
            yield node

    def counted_names(node):
        names = read_names(node)
        counts["names"] += len(names)
        return names

    monkeypatch.setattr(dtype_params, "iter_nodes", counted_nodes)
    monkeypatch.setattr(dtype_params, "assigned_names", counted_names)
    monkeypatch.setattr(dtypes_fact, "assigned_names", counted_names)
    stub = dtypes_fact.DtypeFacts.__new__(dtypes_fact.DtypeFacts)  # the fact before its reading
    stub.facts, stub._module_counts = facts, None
    bindings = dtype_params.Bindings(stub)
    monkeypatch.undo()
    counts["frames"] = count[0]
    return counts, len(bindings.expected)


def test_finding_bindable_functions_does_linear_work(monkeypatch):
    """Each nested function, private method and private module function of the file is found
    with lookups in indexes built once per file: n classes deriving from local classes, n
    nested functions of one function, n module functions (a scan of every frame per base
    class, or of the enclosing body per nested function, was quadratic)."""
    small, small_bound = _binding_operations(10, monkeypatch)
    large, large_bound = _binding_operations(40, monkeypatch)
    assert (small_bound, large_bound) == (40, 160)  # every function of the file is bound
    grown = {name: (small[name], large[name]) for name in small
             if large[name] > 4.5 * max(small[name], 1)}
    assert not grown, f"work grows faster than the file (n vs 4n blocks): {grown}"


SCALER_STEP = '''

def train_step(model, optimizer, loader):
    scaler = GradScaler()
    for x, y in loader:
        with autocast():
            loss = model(x)
        scaler.scale(loss).backward()
        clip_0(model.parameters())  # composed in: clip before unscale (AMP120)
        scaler.step(optimizer)
        scaler.update()
'''

QUIET = '''

def prepare_{i}(x, table):
    h = x.half()
    if h.numel() > 3:
        table[{i}] = h.sum()
    return h.float()


def clip_{i}(h):
    torch.nn.utils.clip_grad_norm_(h, 1.0)
    return h
'''


def test_scaler_flows_walk_only_the_functions_that_can_hold_a_scalers_event(monkeypatch):
    """The scaler flows (plain and composed: AMP120-AMP127) walk a function only when its own
    calls may be a scaler's or a framework's, or when it calls a function of the file (its flow
    then depends on the order of the walk); a quiet leaf is walked only if a caller composes
    it (issue 34: most functions of a large file; ~1.2 s of the 50,000-line file). Counted: the
    statements the flow walkers read, for 10 vs 40 quiet helpers beside one training step
    (before: 4x)."""
    from amplint.analysis.facts import scaler_flow

    counts = []
    real = scaler_flow.FlowWalker.statement

    def counting(self, stmt, ctx):
        counts[-1] += 1
        return real(self, stmt, ctx)

    monkeypatch.setattr(scaler_flow.FlowWalker, "statement", counting)
    found = []
    for blocks in (10, 40):
        source = HEADER + SCALER_STEP + "".join(QUIET.format(i=i) for i in range(blocks))
        facts = FileFacts(parse(source))
        counts.append(0)
        flows = facts.scalers.flows, facts.scalers.composed
        found.append([[e.kind for e in flow.events] for group in flows for flow in group])
    assert found[0] == found[1] and found[0][-1] == ["scale", "clip", "step", "update"]
    assert counts[1] == counts[0], counts


@pytest.mark.parametrize("uses", [10, 40])
def test_positions_ask_a_shared_fix_s_edits_once(uses, monkeypatch):
    """AMP130 rewrites `from torch.cuda.amp import autocast` and every reference with ONE Fix
    that every finding carries: the engine asks positions for its edits once, not once per
    finding (which made the nodes asked for grow with the square of the references)."""
    from amplint.analysis import engine
    from amplint.analysis.engine import Settings

    asked = []
    original = engine.positions_of

    def counted(module, source, wanted, outline=None):
        wanted = list(wanted)
        asked.append(len(wanted))
        return original(module, source, wanted, outline)

    monkeypatch.setattr(engine, "positions_of", counted)
    source = "from torch.cuda.amp import autocast\n" + "".join(
        f"def step_{i}(model, x):\n    with autocast():\n        return model(x)\n"
        for i in range(uses))
    found = engine.lint_source("train.py", source, Settings.default()).diagnostics
    assert len([d for d in found if d.code == "AMP130"]) >= uses
    assert asked and asked[-1] <= 3 * (uses + 1)
