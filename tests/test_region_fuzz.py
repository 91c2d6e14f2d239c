"""Fuzz the shapes real code uses to open autocast regions (issue 20).

Modules are drawn from a grammar of autocast-context spellings (partials, attributes set in
other methods and under `if`, conditional expressions, nullcontext, reassignment, lambdas,
ExitStack) and their uses (`with`, decorators, calls), with hazards in the bodies. Every
module must lint and fix without an internal error, every fix must re-parse, and a second
fix must change nothing. CI draws the same examples every run (derandomized)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings, strategies as st

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.parsing import valid_python
from amplint.analysis.rules import all_rules

EVERY_RULE = Settings(frozenset(all_rules()), unsafe_fixes=True)

# Few holders, so that one draw often defines an alias through another.
HOLDERS = ["ctx", "amp_autocast", "self.autocast"]

CONTEXTS = [
    'functools.partial(torch.amp.autocast, device_type="cuda")',
    'functools.partial(torch.autocast, "cuda", dtype=torch.bfloat16)',
    "contextlib.nullcontext",
    "contextlib.suppress",
    'torch.autocast("cuda", dtype=torch.float16)',
    'torch.autocast("cpu", enabled=flag)',
    'torch.cuda.amp.autocast(enabled=flag)',
    'lambda: torch.autocast("cuda")',
    "{other}",
    "{other}() if flag else contextlib.nullcontext()",
    "contextlib.nullcontext() if flag else {other}()",
    "{other} if flag else contextlib.nullcontext",
    'torch.autocast(device_type="cuda", enabled=False)',
    "getattr(torch, 'autocast')",
]

BODIES = [
    "pass",
    "loss = F.binary_cross_entropy(torch.sigmoid(model(x)), y)",
    "loss = model(x)\n@I@loss.backward()",
    "buf = torch.zeros(3)\n@I@buf[idx] = model(x)",
    "scores = model(x) @ x.T\n@I@scores = scores.masked_fill(mask, -1e9)",
    "out = model(x).half()",
    "scaler.scale(model(x)).backward()\n@I@scaler.step(opt)",
    "crit = nn.BCELoss()\n@I@loss = crit(torch.sigmoid(model(x)), y)",
]

USES = [  # (template, whether the body is nested in it)
    ("with {h}():\n@I@    {body}", True),
    ("with {h}:\n@I@    {body}", True),
    ("with {h}() as c, contextlib.nullcontext():\n@I@    {body}", True),
    ("stack = contextlib.ExitStack()\n@I@stack.enter_context({h}())\n@I@{body}", False),
    ("{h}()\n@I@{body}", False),
]

HEADER = (
    "import contextlib\nimport functools\nimport torch\nimport torch.nn as nn\n"
    "import torch.nn.functional as F\n\n"
)


def _indent(text: str, prefix: str) -> str:
    return text.replace("@I@", prefix)


@st.composite
def modules(draw):
    in_class = draw(st.booleans())
    holders = HOLDERS if in_class else [h for h in HOLDERS if not h.startswith("self.")]
    assigns = draw(st.lists(
        st.tuples(st.sampled_from(holders), st.sampled_from(CONTEXTS), st.sampled_from(holders),
                  st.booleans(), st.sampled_from(["setup", "run", "module"])),
        min_size=1, max_size=5,
    ))
    uses = draw(st.lists(
        st.tuples(st.sampled_from(holders), st.sampled_from(USES), st.sampled_from(BODIES)),
        min_size=1, max_size=3,
    ))
    decorate = draw(st.sampled_from([None] + holders))
    setup, run, module_level = [], [], []
    for holder, context, other, under_if, where in assigns:
        if where == "module" and holder.startswith("self."):
            where = "setup"
        if where == "module" and not in_class:
            where = "module"
        value = context.format(other=other if not (where == "module" and other.startswith("self.")) else "ctx")
        line = f"{holder} = {value}"
        if under_if:
            line = f"if flag:\n@I@    {line}"
        (setup if where == "setup" else run if where == "run" else module_level).append(line)
    body_prefix = "        " if in_class else "    "
    run_lines = [_indent(line, body_prefix) for line in run]
    for holder, (use, nested), body in uses:
        body_text = _indent(body, body_prefix + ("    " if nested else ""))
        run_lines.append(_indent(use.format(h=holder, body=body_text), body_prefix))
    text = HEADER + "".join(_indent(line, "") + "\n" for line in module_level)
    if in_class:
        text += "\nclass Runner:\n"
        text += "    def setup(self, flag):\n"
        text += "".join(f"        {_indent(line, '        ')}\n" for line in setup) or "        pass\n"
        if decorate and not decorate.startswith("self."):
            text += f"    @{decorate}()\n"
        text += "    def run(self, flag, model, x, y, idx, mask, scaler, opt):\n"
        text += "".join(f"        {line}\n" for line in run_lines)
    else:
        text += "\n"
        if decorate:
            text += f"@{decorate}()\n"
        text += "def run(flag, model, x, y, idx, mask, scaler, opt):\n"
        text += "".join(f"    {_indent(line, '    ')}\n" for line in setup)
        text += "".join(f"    {line}\n" for line in run_lines)
    return text


@settings(max_examples=int(os.environ.get("AMPLINT_FUZZ_EXAMPLES", "300")), deadline=None,
          derandomize=bool(os.environ.get("CI")),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(modules())
def test_region_shapes_lint_and_fix_without_internal_errors(source):
    if not valid_python(source):  # the grammar can make an empty block; not our concern here
        return
    linted = lint_source("fuzz.py", source, EVERY_RULE)
    assert not linted.internal_error, (linted.errors, source)
    fixed = lint_source("fuzz.py", source, EVERY_RULE, fix=True)
    assert not fixed.internal_error, (fixed.errors, source)
    assert not any("fix skipped" in error for error in fixed.errors), (fixed.errors, source)
    if fixed.fixed_source is None:
        return
    assert valid_python(fixed.fixed_source), source
    again = lint_source("fuzz.py", fixed.fixed_source, EVERY_RULE, fix=True)
    assert not again.internal_error, (again.errors, fixed.fixed_source)
    assert again.fixed_source is None, (source, fixed.fixed_source, again.fixed_source)
