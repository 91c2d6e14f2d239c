"""Files the project pass gives region entries, kept away from LibCST when no rule that reads
the region can fire (issue 34): AMP110 needs a constant beyond float16's range, AMP150 a
grad-free pass and AMP151 a Function's `apply` in the functions the region reaches.

Each project is shaped like detectron2 (a trainer opening `torch.autocast` around helpers of
layers/ and data/); each clean file has a hazard twin that is still parsed and found. Every
project is linted both ways (with the prefilter, and as if every file with entries were parsed):
the results are the same."""

from __future__ import annotations

import ast
import symtable
from typing import Dict, List

import pytest

import amplint.analysis.engine as engine
from amplint.analysis.engine import Settings, could_match
from amplint.analysis.facts.region_entries import EntryRegion
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.prefilter_entries import CodeNames
from amplint.analysis.project import lint_project
from amplint.analysis.rules import all_rules

DEFAULT = Settings.default().rules()

# detectron2/data/detection_utils.py: keypoints clipped with small constants
KEYPOINTS = (
    "import torch\n\n\n"
    "def clip_keypoints(keypoints, image_size, pad_value=0.0):\n"
    "    inside = (keypoints[:, 0] >= 0) & (keypoints[:, 0] < image_size[1])\n"
    "    keypoints[~inside] = 0\n"
    "    keypoints[:, 2][~inside] = -1.0\n"
    "    padded = keypoints.new_full((keypoints.shape[0], 3), pad_value)\n"
    "    padded.fill_(1.0)\n"
    "    scores = keypoints.masked_fill(~inside[:, None], float('-inf'))\n"
    "    return keypoints, padded, scores\n"
)
KEYPOINTS_TRAINER = (
    "import torch\n"
    "from keypoints import clip_keypoints\n\n\n"
    "def step(model, batch):\n"
    "    with torch.autocast('cuda', dtype=torch.float16):\n"
    "        points = model(batch['image'])\n"
    "        return clip_keypoints(points, batch['size'])\n"
)
# the hazard twins: a constant beyond float16's range, written or through a name
KEYPOINTS_HAZARDS = [
    KEYPOINTS.replace("keypoints[~inside] = 0", "keypoints[~inside] = -1e9"),
    "NEG = -2 ** 16\n" + KEYPOINTS.replace("padded.fill_(1.0)", "padded.fill_(NEG)"),
    KEYPOINTS.replace("float('-inf')", "-1e5"),
]

# detectron2/modeling/proposal_generator/rpn.py: a @no_grad helper the region does not reach
HEADS = (
    "import torch\n\n\n"
    "@torch.no_grad()\n"
    "def ema_update(teacher, student):\n"
    "    for t, s in zip(teacher.parameters(), student.parameters()):\n"
    "        t.mul_(0.99).add_(s.detach(), alpha=0.01)\n\n\n"
    "def distill_loss(model, x):\n"
    "    ref = model(x)\n"
    "    out = model(x)\n"
    "    return (out - ref).abs().mean()\n"
)
HEADS_HAZARD = HEADS.replace(
    "    ref = model(x)\n", "    with torch.no_grad():\n        ref = model(x)\n")
HEADS_TRAINER = (
    "import torch\n"
    "from heads import distill_loss\n\n\n"
    "def step(model, x):\n"
    "    with torch.autocast('cuda', dtype=torch.float16):\n"
    "        return distill_loss(model, x)\n"
)

# detectron2/layers/wrappers.py and deform_conv.py: an extension's Function, applied only in a
# helper the region does not reach
WRAPPERS = (
    "import torch\n"
    "from torch.autograd import Function\n"
    "from . import _C\n\n\n"
    "class _DeformConv(Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x, offset, weight):\n"
    "        ctx.save_for_backward(x, offset, weight)\n"
    "        return _C.deform_conv_forward(x, offset, weight)\n\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad):\n"
    "        return _C.deform_conv_backward(grad, *ctx.saved_tensors)\n\n\n"
    "def deform_conv(x, offset, weight):\n"
    "    return _DeformConv.apply(x, offset, weight)\n\n\n"
    "def cat(tensors, dim=0):\n"
    "    if len(tensors) == 1:\n"
    "        return tensors[0]\n"
    "    return torch.cat(tensors, dim)\n"
)
WRAPPERS_TRAINER = (
    "import torch\n"
    "from wrappers import cat\n\n\n"
    "def step(model, xs):\n"
    "    with torch.autocast('cuda', dtype=torch.float16):\n"
    "        return model(cat(xs))\n"
)
# the hazard twins: applied in a reached function, by name or through `self.op = Fn.apply`
WRAPPERS_HAZARDS = [
    WRAPPERS.replace("    return torch.cat(tensors, dim)\n",
                     "    return deform_conv(torch.cat(tensors, dim), tensors[0], tensors[1])\n"),
    WRAPPERS.replace("    return torch.cat(tensors, dim)\n",
                     "    return DeformConv()(torch.cat(tensors, dim), tensors[0])\n")
    + "\n\nclass DeformConv(torch.nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.op = _DeformConv.apply\n\n"
      "    def forward(self, x, offset):\n"
      "        return self.op(x, offset, self.weight)\n",
]


def _lint(files: Dict[str, str], forced: bool, monkeypatch) -> tuple:
    """(results, the texts LibCST parsed for a lint with entries). `forced`: as on main
    before issue 34, every file with entries parsed."""
    parsed: List[str] = []
    linting: List[bool] = []
    real_parse, real_lint, real_match = engine.parse, engine.lint_source, engine.could_match

    def parse(source, *args, **kwargs):
        if linting and linting[-1]:
            parsed.append(source)
        return real_parse(source, *args, **kwargs)

    def lint(path, source, settings, *args, **kwargs):
        linting.append(bool(kwargs.get("entries")) and not kwargs.get("summarize"))
        try:
            return real_lint(path, source, settings, *args, **kwargs)
        finally:
            linting.pop()

    monkeypatch.setattr(engine, "parse", parse)
    monkeypatch.setattr(engine, "lint_source", lint)
    if forced:
        monkeypatch.setattr(engine, "could_match",
                            lambda source, rules, entries=(): bool(entries) or real_match(source, rules))
    try:
        results = lint_project(files, Settings.default())
    finally:
        monkeypatch.undo()
    outcome = {p: ([(d.code, d.line, d.column, d.message) for d in r.diagnostics], r.errors)
               for p, r in results.items()}
    return outcome, parsed


def _check(files, name, monkeypatch, parsed_now, codes):
    forced, parsed_forced = _lint(files, True, monkeypatch)
    now, parsed = _lint(files, False, monkeypatch)
    assert now == forced
    assert parsed_forced.count(files[name]) == 1  # it has entries: main parses it
    assert parsed.count(files[name]) == parsed_now
    assert {d[0] for d in now[name][0]} == set(codes)


def test_small_constants_in_a_file_with_entries_are_not_parsed(monkeypatch):
    files = {"keypoints.py": KEYPOINTS, "train.py": KEYPOINTS_TRAINER}
    _check(files, "keypoints.py", monkeypatch, 0, ())


@pytest.mark.parametrize("hazard", KEYPOINTS_HAZARDS)
def test_a_constant_beyond_float16_under_an_entry_region_is_parsed_and_found(monkeypatch, hazard):
    files = {"keypoints.py": hazard, "train.py": KEYPOINTS_TRAINER}
    _check(files, "keypoints.py", monkeypatch, 1, ("AMP110",))


def test_a_no_grad_outside_the_reached_functions_is_not_parsed(monkeypatch):
    files = {"heads.py": HEADS, "train.py": HEADS_TRAINER}
    _check(files, "heads.py", monkeypatch, 0, ())


def test_a_no_grad_pass_in_a_reached_function_is_parsed_and_found(monkeypatch):
    files = {"heads.py": HEADS_HAZARD, "train.py": HEADS_TRAINER}
    _check(files, "heads.py", monkeypatch, 1, ("AMP150",))


def test_a_function_applied_outside_the_reached_functions_is_not_parsed(monkeypatch):
    files = {"wrappers.py": WRAPPERS, "train.py": WRAPPERS_TRAINER}
    _check(files, "wrappers.py", monkeypatch, 0, ())


@pytest.mark.parametrize("hazard", WRAPPERS_HAZARDS)
def test_a_function_applied_in_a_reached_function_is_parsed_and_found(monkeypatch, hazard):
    files = {"wrappers.py": hazard, "train.py": WRAPPERS_TRAINER}
    _check(files, "wrappers.py", monkeypatch, 1, ("AMP151",))


@pytest.mark.parametrize("value, overflows", [
    ("0", False), ("-1.0", False), ("65504", False), ("-65504.0", False), ("2 ** 15", False),
    ("float('-inf')", False), ("1e400", False), ("int(unbound)", False), ("SMALL", False),
    ("x / 1e-9", False), ("'-1e9'", False),
    ("65505", True), ("-1e9", True), ("2 ** 16", True), ("-2 ** 16", True), ("float('1e9')", True),
    ("int(BIG)", True), ("-BIG", True), ("SMALL * 1000", True), ("torch.finfo(torch.float32).min", True),
    ("lookup(BIG)", False), ("PICK", True),
])
def test_a_store_counts_only_with_a_constant_beyond_float16s_range(value, overflows):
    """facts/fills.py's `constant`: finite and beyond ±65504 (names read through every binding,
    parameter defaults included)."""
    text = ("import torch\nSMALL = 100.0\nBIG = 1e10\nPICK = 1.0\n\n\n"
            "def f(x, m, PICK=-1e6):\n"
            f"    x[m] = {value}\n")
    marks = CodeNames.of(text).names
    assert ("<index store of a constant>" in marks) is overflows


# detectron2/modeling/box_regression.py: sums and no square, no factory write, no backward
BOX_REGRESSION = (
    "import torch\n\n\n"
    "def smooth_l1(pred, target, beta):\n"
    "    diff = (pred - target).abs()\n"
    "    loss = torch.where(diff < beta, 0.5 * diff / beta, diff - 0.5 * beta)\n"
    "    return loss.sum() / max(1, target.numel())\n\n\n"
    "def apply_deltas(deltas, boxes):\n"
    "    widths = boxes[:, 2] - boxes[:, 0]\n"
    "    return deltas * widths[:, None] + smooth_l1(deltas, boxes, 0.1).mean()\n"
)
BOX_ENTRY = (EntryRegion("apply_deltas", Enabled.TRUE, "cuda", "float16", "called at train.py:3"),)


def test_a_file_whose_code_misses_a_reached_rules_needs_walks_no_reached_function(monkeypatch):
    """The file's names hold every reached function's: where they miss what AMP101/AMP141 need
    beside their calls (a written buffer, a square), no reached function is walked."""
    walks = []
    real = CodeNames._reached_defs
    monkeypatch.setattr(CodeNames, "_reached_defs",
                        lambda self, targets: walks.append(targets) or real(self, targets))
    assert not could_match(BOX_REGRESSION, DEFAULT, BOX_ENTRY)
    assert walks == []
    squared = BOX_REGRESSION.replace("(pred - target).abs()", "(pred - target) ** 2")
    assert could_match(squared, DEFAULT, BOX_ENTRY)  # AMP141: a sum of a square, reached
    assert walks == [("apply_deltas",)]


@pytest.mark.parametrize("code,index,text", [
    pytest.param(code, index, flag.code, id=f"{code}-{index}")
    for code, rule in sorted(all_rules().items()) for index, flag in enumerate(rule.flag)
])
def test_a_reached_functions_names_are_the_files_names(code, index, text):
    names = CodeNames.of(text)
    if names is None:
        return
    every = tuple(sorted(names.defs))
    assert all(found <= names.names for found in names.reached(every))


def test_a_file_with_entries_kept_out_is_checked_with_the_tree_the_prefilter_made(monkeypatch):
    """Python parses a file with entries once: the prefilter's tree (python_tree) also says
    the text has no syntax error, where the engine asked Python's parser again (symtable)."""
    text = BOX_REGRESSION.replace("0.1", "0.125")  # a text no other test parsed
    parses = []
    real_parse, real_table = ast.parse, symtable.symtable
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append("ast") or real_parse(*a, **k))
    monkeypatch.setattr(symtable, "symtable", lambda *a, **k: parses.append("symtable") or real_table(*a, **k))
    result = engine.lint_source("box_regression.py", text, Settings.default(), entries=BOX_ENTRY)
    assert result.diagnostics == [] and result.errors == []
    assert parses == ["ast"]
    broken = text + "def f(:\n"  # a broken file still reports as before
    result = engine.lint_source("box_regression.py", broken, Settings.default(), entries=BOX_ENTRY)
    assert result.errors and "syntax error" in result.errors[0]


def test_names_bound_to_each_other_are_read_once_each():
    """`x = x + x` bound many times: every binding of every name is followed (a superset of
    fills.py, which reads a name bound once), each node once per depth."""
    text = "x = 1.0\n" + "x = x + x\n" * 40 + "\n\ndef f(y, m):\n    y[m] = x\n"
    assert "<index store of a constant>" not in CodeNames.of(text).names  # small sums only
    assert "<index store of a constant>" in CodeNames.of(text.replace("1.0", "1e5")).names
