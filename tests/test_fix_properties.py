"""Property-based tests of the fix engine (issue 7): generated training scripts mixing AMP hazards
and clean idioms in random nesting (loops, `if`/`else`, `try`, multi-item `with`, decorators,
nested functions, comments, odd formatting, tabs) must come out of `--fix --unsafe-fixes`
compiling, unchanged outside the fixes' region (lines and AST, as benchmarks/fix_corpus.py
defines it), idempotent, and with only suggestion-only findings left."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.rules import all_rules

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_tool():
    name = "amplint_fix_corpus_tool"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(REPO, "benchmarks", "fix_corpus.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


tool = _load_tool()
ALL = Settings(frozenset(all_rules()), unsafe_fixes=True)

# -- the generator -------------------------------------------------------------------------------
# A block is a list of (depth, text) lines; wrappers indent their body by one level.

LEAVES = [
    # hazards
    ["loss.backward()"],
    ["scaler.scale(loss).backward()"],
    ["scaler.step(optimizer)"],
    ["scaler.update()"],
    ["torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"],
    ["loss = F.binary_cross_entropy(torch.sigmoid(out), y)"],
    ["loss = torch.nn.functional.binary_cross_entropy(probs, y, reduction='sum')"],
    ["buf = torch.zeros(n, h.shape[-1], device=h.device)"],
    ["scores = scores.masked_fill(mask == 0, -1e9)"],
    ["x = x.cuda().half()"],
    ["with torch.no_grad():", (1, "xhat = model(x)"), "yhat = model(xhat)"],
    ["scaler.unscale_(optimizer)", "scaler.unscale_(optimizer)"],
    # clean idioms
    ["out = model(x)"],
    ["loss = loss_fn(out, y)"],
    ["optimizer.zero_grad(set_to_none=True)"],
    ["optimizer.step()"],
    ["scaler.unscale_(optimizer)"],
    ["buf = torch.zeros(n, dtype=torch.float32)"],
    ["loss = F.binary_cross_entropy_with_logits(out, y)"],
    ["pass"],
    ["# a comment mentioning autocast and backward()", "pass"],
    ["note = 'with torch.autocast(\"cuda\"): loss.backward()'"],
    # odd formatting
    ["loss = (model(x)", (1, ".float()"), (1, ".mean())  # trailing comment")],
    ["loss = \\", (1, "model(x).sum()")],
    ["a = 1; loss.backward()"],
    ["loss.backward()  # noqa: E501"],
    ["scaler.step(", (1, "optimizer,"), ")"],
    ["loss = F.binary_cross_entropy(", (1, "torch.sigmoid(out),  # probs"), (1, "y)")],
    ["", "", "out = model(x)"],
]

WITH_HEADERS = [
    "with torch.autocast('cuda'):",
    "with torch.autocast(device_type='cuda', dtype=torch.float16):",
    "with torch.autocast('cuda', dtype=torch.bfloat16), torch.enable_grad():",
    "with torch.enable_grad(), torch.autocast(device_type='cuda'):",
    "with torch.autocast(enabled=use_amp, dtype=torch.float16):",
    "with torch.cuda.amp.autocast():",
    "with autocast():",
    "with torch.autocast('cuda', enabled=False):",
    "with torch.no_grad():",
    "with open(path) as fh, torch.autocast('cuda'):",
    "with (torch.autocast('cuda'),",
]


def _leaf():
    return st.sampled_from(LEAVES).map(
        lambda lines: [(l[0], l[1]) if isinstance(l, tuple) else (0, l) for l in lines]
    )


def _indent(block):
    return [(depth + 1, text) for depth, text in block]


def _wrap(children):
    body = st.lists(children, min_size=1, max_size=4).map(lambda bs: [l for b in bs for l in b])

    def with_(header, inner):
        if header.endswith(","):  # parenthesized multi-item with, over two lines
            return [(0, header), (1, "torch.enable_grad()):")] + _indent(inner)
        return [(0, header)] + _indent(inner)

    def func(decorator, inner):
        head = [(0, decorator)] if decorator else []
        return head + [(0, "def inner(x, y):")] + _indent(inner) + [(0, "inner(x, y)")]

    return st.one_of(
        st.builds(with_, st.sampled_from(WITH_HEADERS), body),
        body.map(lambda inner: [(0, "for x, y in loader:")] + _indent(inner)),
        st.builds(
            lambda a, b: [(0, "if step % accum == 0:")] + _indent(a) + (
                [(0, "else:")] + _indent(b) if b else []),
            body, st.one_of(st.none(), body)),
        st.builds(
            lambda a, b: [(0, "try:")] + _indent(a) + [(0, "except RuntimeError as exc:")]
            + _indent(b) + [(0, "finally:"), (1, "pass")],
            body, body),
        st.builds(func, st.sampled_from(
            [None, "@torch.no_grad()", "@torch.autocast('cuda')", "@functools.wraps(f)",
             "@torch.amp.custom_fwd(device_type='cuda')"]), body),
    )


BLOCKS = st.recursive(_leaf(), _wrap, max_leaves=12)

HEADERS = [
    "import torch\nimport torch.nn.functional as F\n",
    "import functools\nimport torch\nfrom torch import nn\nimport torch.nn.functional as F\n",
    '"""A training script."""\nfrom __future__ import annotations\n\nimport torch\n'
    "import torch.nn.functional as F\nfrom torch.cuda.amp import autocast, GradScaler\n",
    "import torch as torch\nimport torch.nn.functional as F\nfrom torch.cuda.amp import autocast\n",
]
# Every header binds `torch`: the leaves use it. (In a file that uses `torch` without binding
# it, a fix that adds `import torch` turns that code into torch code, and later fix rounds
# may then fix findings the first run could not see: outside the first run's region.)
SCALERS = ["", "scaler = torch.amp.GradScaler('cuda')\n", "scaler = GradScaler()\n"]


@st.composite
def scripts(draw):
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    blocks = draw(st.lists(BLOCKS, min_size=1, max_size=3))
    top_level = draw(st.booleans())
    lines = []
    for block in blocks:
        if top_level:
            lines.extend(block)
        else:
            lines.append((0, "def train(model, loader, optimizer, scaler, x, y, out, mask, n, h):"))
            lines.extend(_indent(block))
            lines.append((0, ""))
    text = "".join(
        (unit * depth + t if t else "") + "\n" for depth, t in lines
    )
    header = draw(st.sampled_from(HEADERS)) + draw(st.sampled_from(SCALERS))
    return header + "\n" + text


def _compiles(text):
    return tool.compiles(text)


def check_invariants(text: str) -> None:
    assert _compiles(text), text
    before = tool.engine_before("gen.py", text, ALL)
    assert not before.crashes, before.crashes
    fixed = lint_source("gen.py", text, ALL, fix=True)
    assert not fixed.internal_error and not fixed.errors, fixed.errors
    after = fixed.fixed_source if fixed.fixed_source is not None else text
    assert _compiles(after), after
    problems = tool.changed_lines_outside(text, after, before.region, before.imports_torch)
    import ast

    problems += tool.ast_outside(ast.parse(text), ast.parse(after), before.region)
    if not tool.is_cascade(before, fixed.fixes_applied):
        # (A cascade, where a fix makes a new finding that a later round fixes, may reach
        # outside the first run's region: see test_cascade_changes_stay_in_reported_region.)
        assert not problems, (problems, text, after)
    again = lint_source("gen.py", after, ALL, fix=True)
    assert again.fixed_source is None, ("not idempotent", after, again.fixed_source)
    fixable_left = [d for d in again.diagnostics if d.fix is not None]
    assert not fixable_left, [(d.code, d.line, d.message) for d in fixable_left]
    if fixed.fixed_source is None:
        assert not [d for d in fixed.diagnostics if d.fix is not None]


# CI (CI=true) draws the same examples every run, so a red build is reproducible; local runs
# keep exploring new ones.
@settings(max_examples=int(os.environ.get("AMPLINT_PROPERTY_EXAMPLES", "40")), deadline=None,
          derandomize=bool(os.environ.get("CI")),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scripts())
# Found by this test: repeated blocks, where a greedy diff pairs lines with the wrong copy.
@example("import torch\nimport torch.nn.functional as F\nscaler = GradScaler()\n\nwith torch.autocast(enabled=use_amp, dtype=torch.float16):\n    for x, y in loader:\n        buf = torch.zeros(n, h.shape[-1], device=h.device)\n        @torch.amp.custom_fwd(device_type='cuda')\n        def inner(x, y):\n            if step % accum == 0:\n                buf = torch.zeros(n, h.shape[-1], device=h.device)\n                loss = F.binary_cross_entropy(torch.sigmoid(out), y)\n            for x, y in loader:\n                loss.backward()\n        inner(x, y)\n        def inner(x, y):\n            x = x.cuda().half()\n            buf = torch.zeros(n, dtype=torch.float32)\n            loss = F.binary_cross_entropy(\n                torch.sigmoid(out),  # probs\n                y)\n        inner(x, y)\n    with autocast():\n        scores = scores.masked_fill(mask == 0, -1e9)\n    out = model(x)\nloss.backward()\nwith torch.autocast(enabled=use_amp, dtype=torch.float16):\n    for x, y in loader:\n        buf = torch.zeros(n, h.shape[-1], device=h.device)\n        @torch.amp.custom_fwd(device_type='cuda')\n        def inner(x, y):\n            if step % accum == 0:\n                buf = torch.zeros(n, h.shape[-1], device=h.device)\n                loss = F.binary_cross_entropy(torch.sigmoid(out), y)\n            for x, y in loader:\n                loss.backward()\n        inner(x, y)\n        def inner(x, y):\n            x = x.cuda().half()\n            buf = torch.zeros(n, dtype=torch.float32)\n            loss = F.binary_cross_entropy(\n                torch.sigmoid(out),  # probs\n                y)\n        inner(x, y)\n    with autocast():\n        scores = scores.masked_fill(mask == 0, -1e9)\n    out = model(x)\n")
# And: a backward inside two nested autocast regions (one a multi-item `with`).
@example("import torch\nimport torch.nn.functional as F\n\ndef train(model, loader, optimizer, scaler, x, y, out, mask, n, h):\n    with open(path) as fh, torch.autocast('cuda'):\n        with torch.autocast('cuda'):\n            scaler.step(optimizer)\n            loss.backward()\n\n")
def test_generated_scripts_keep_the_fix_invariants(text):
    check_invariants(text)


def test_the_generator_makes_fixable_hazards():
    """The property above is not vacuous: the generator's building blocks produce fixes."""
    text = (
        "import torch\nimport torch.nn.functional as F\nscaler = torch.amp.GradScaler('cuda')\n"
        "for x, y in loader:\n"
        "    with torch.autocast('cuda'):\n"
        "        out = model(x)\n"
        "        loss = F.binary_cross_entropy(torch.sigmoid(out), y)\n"
        "        scaler.scale(loss).backward()\n"
        "        scaler.step(optimizer)\n"
    )
    result = lint_source("gen.py", text, ALL, fix=True)
    assert result.fixed_source is not None
    assert {"AMP102", "AMP104", "AMP121"} <= set(result.fixes_applied)
    check_invariants(text)


def test_the_checks_catch_an_edit_outside_the_region():
    """The region checks themselves can fail: an edit far from any finding is reported."""
    text = (
        "import torch\nx = 1\ny = 2\n"
        "with torch.autocast('cuda'):\n    loss = model(x).mean()\n    loss.backward()\n"
    )
    before = tool.engine_before("gen.py", text, ALL)
    assert before.region and 2 not in before.region
    bad = text.replace("x = 1", "x = 10")
    import ast

    assert tool.changed_lines_outside(text, bad, before.region, before.imports_torch)
    assert tool.ast_outside(ast.parse(text), ast.parse(bad), before.region)
    inserted = text.replace("x = 1\n", "x = 1\nz = 3\n")
    assert tool.changed_lines_outside(text, inserted, before.region, False)
    assert tool.ast_outside(ast.parse(text), ast.parse(inserted), before.region)


CASCADE = 'import torch\nimport torch.nn.functional as F\n\ndef train(model, loader, optimizer, scaler, x, y, out, mask, n, h):\n    with torch.autocast(\'cuda\'):\n\n\n        out = model(x)\n        with torch.autocast(\'cuda\'):\n            for x, y in loader:\n                note = \'with torch.autocast("cuda"): loss.backward()\'\n                loss.backward()\n            loss.backward()\n            loss.backward()  # noqa: E501\n            loss.backward()\n\ndef train(model, loader, optimizer, scaler, x, y, out, mask, n, h):\n    with torch.autocast(\'cuda\'):\n        loss.backward()\n        # a comment mentioning autocast and backward()\n        pass\n\ndef train(model, loader, optimizer, scaler, x, y, out, mask, n, h):\n    for x, y in loader:\n        try:\n            a = 1; loss.backward()\n\n\n            out = model(x)\n            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n            loss = F.binary_cross_entropy(torch.sigmoid(out), y)\n        except RuntimeError as exc:\n            loss = F.binary_cross_entropy(\n                torch.sigmoid(out),  # probs\n                y)\n            loss = loss_fn(out, y)\n            out = model(x)\n        finally:\n            pass\n        @torch.no_grad()\n        def inner(x, y):\n            loss = (model(x)\n                .float()\n                .mean())  # trailing comment\n        inner(x, y)\n        with torch.autocast(device_type=\'cuda\', dtype=torch.float16):\n            scaler.step(\n                optimizer,\n            )\n            loss.backward()\n        try:\n            optimizer.step()\n        except RuntimeError as exc:\n            scaler.unscale_(optimizer)\n            scaler.unscale_(optimizer)\n        finally:\n            pass\n\n'  # found by the property test


def test_cascade_fix_is_still_correct():
    """AMP122 scales the backward and, in the same fix, unscales before the clip that follows
    (what AMP120 would ask for in a later round)."""
    fixed = lint_source("gen.py", CASCADE, ALL, fix=True)
    before = tool.engine_before("gen.py", CASCADE, ALL)
    assert before.fixable_codes == {"AMP122": 1, "AMP121": 1, "AMP104": 1}
    assert fixed.fixes_applied == {"AMP122": 1, "AMP121": 1, "AMP104": 1}
    assert not tool.is_cascade(before, fixed.fixes_applied)
    assert "            out = model(x)\n            scaler.unscale_(optimizer)\n" \
        "            torch.nn.utils.clip_grad_norm_" in fixed.fixed_source
    assert lint_source("gen.py", fixed.fixed_source, ALL, fix=True).fixed_source is None


def test_cascade_changes_stay_in_reported_region():
    """AMP122's fix unscales before the clip that follows (issue 15): the AMP120 change is
    part of the reported fix, not a later round's."""
    before = tool.engine_before("gen.py", CASCADE, ALL)
    fixed = lint_source("gen.py", CASCADE, ALL, fix=True)
    assert not tool.changed_lines_outside(CASCADE, fixed.fixed_source, before.region,
                                          before.imports_torch)
