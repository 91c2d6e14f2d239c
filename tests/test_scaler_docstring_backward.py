"""A file is a GradScaler caller through its pair (`.backward(` and `self.`) only when the
`.backward(` is code: a docstring's `>>> loss.backward()` or a comment's backpropagates nothing.
The first pass (run/scaler_inputs.first_pass_plan), the pool (summarize_file) and the in-process
summaries (scaler_summaries.local_summaries) make that one test (`composes_calls`), so a file
whose only `.backward(` is in a docstring gets no caller summary in any of them (start: the
pool parsed it with LibCST and summarised it; 10 such files on the mixed tree, ~0.3 s).

The project, written here, is shaped like Lightning-AI/pytorch-lightning: core/hooks.py's
`ModelHooks` documents `backward` with an example in its docstring and a comment, and has the
`on_before_backward` / `on_after_backward` hooks; loops/optimization.py calls them around the
scaled backward, clips and steps the scaler: AMP120 (the gradients are still scaled), the same
as on start. Twin: the loop unscales before the clip: silent.
"""

from __future__ import annotations

import io
import random
import tokenize

from project_files import code_findings

HOOKS = '''import torch


class ModelHooks:
    """Hooks of a LightningModule.

    Example::

        def backward(self, loss):
            loss.backward()  # the default
    """

    def on_before_backward(self, loss):
        # called before loss.backward(); override to inspect the loss
        self.last_loss = loss

    def on_after_backward(self):
        self.log_grad_norm = None
'''

LOOP = """import torch

from lit.core.hooks import ModelHooks


class Module(ModelHooks, torch.nn.Module):
    pass


class OptimizationLoop:
    def __init__(self, module, optimizer):
        self.module = module
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def run(self, loss):
        self.module.on_before_backward(loss)
        self.scaler.scale(loss).backward()
        self.module.on_after_backward()
        torch.nn.utils.clip_grad_norm_(self.module.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
"""

HOOKS_PATH = "lit/core/hooks.py"
SCALED = "        self.scaler.scale(loss).backward()\n"
UNSCALED = SCALED + "        self.scaler.unscale_(self.optimizer)\n"


def _files(loop=LOOP, hooks=HOOKS):
    return {HOOKS_PATH: hooks, "lit/loops/optimization.py": loop, "lit/__init__.py": "",
            "lit/core/__init__.py": "", "lit/loops/__init__.py": ""}


def _plan_and_pool(tmp_path, text, monkeypatch):
    """(first_pass_plan of the text, the pool's caller summary of it, whether the pool parsed it)."""
    from amplint.run import scaler_inputs

    path = tmp_path / "hooks.py"
    path.write_bytes(text.encode())
    parsed = []
    real = scaler_inputs.parse
    monkeypatch.setattr(scaler_inputs, "parse", lambda source: parsed.append(1) or real(source))
    plan = scaler_inputs.first_pass_plan(str(path), text, text.encode())
    return plan, scaler_inputs.summarize_file((str(path), False)), bool(parsed)


def test_a_docstring_backward_makes_no_caller_summary_anywhere(tmp_path, monkeypatch):
    from amplint.analysis.project.scaler_summaries import local_summaries

    plan, pooled, parsed = _plan_and_pool(tmp_path, HOOKS, monkeypatch)
    assert plan is False  # start: True (linted by the first pass and summarised there)
    assert pooled is None and not parsed  # start: parsed and summarised
    assert local_summaries({HOOKS_PATH: HOOKS}, [HOOKS_PATH], False)[HOOKS_PATH] is None
    # asked as a callee, it is summarised as before
    assert local_summaries({HOOKS_PATH: HOOKS}, [HOOKS_PATH], True)[HOOKS_PATH] is not None
    # the project's findings: the hazard in the loop, its twin silent
    assert code_findings(_files(), "AMP120")[0] == [("loops/optimization.py", 20, "AMP120")]
    assert code_findings(_files(LOOP.replace(SCALED, UNSCALED)), "AMP120")[0] == []
    # a `.backward(` in code keeps the caller summary (as on start)
    hooks = HOOKS.replace("        self.last_loss = loss\n", "        self.last_loss = loss\n"
                          "        loss.backward()\n")
    plan, pooled, parsed = _plan_and_pool(tmp_path, hooks, monkeypatch)
    assert plan is True and pooled is not None and parsed


def _backward_token(text):
    """`.backward(` as three adjacent tokens (None: the text is not Python)."""
    try:
        compile(text, "generated.py", "exec", dont_inherit=True)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    if any(token.type == tokenize.STRING and ".backward(" in token.string
           and "f" in token.string.split(token.string[-1])[0].lower() for token in tokens):
        return True  # an f-string: its expressions are code (code_blanking keeps it whole)
    return any(a.string == "." and b.string == "backward" and c.string == "(" and a.end == b.start
               and b.end == c.start and a.type == tokenize.OP
               for a, b, c in zip(tokens, tokens[1:], tokens[2:]))


def test_the_pair_test_is_the_backward_token_on_generated_texts():
    """`composes_calls` on texts holding `self.` and `.backward(` (no caller word): True
    exactly where `.backward(` is three adjacent tokens, or inside an f-string."""
    from amplint.analysis.project.scaler_summaries import composes_calls

    pieces = ["x.backward(", ".backward(", "self.", "#", "'", '"', "'''", '"""', "\\", "\n", " ",
              "r", "b", "(", ")", "y", "loss", "\\'", "\\\n", "f"]
    rng = random.Random(51)
    compared = 0
    for _ in range(30000):
        text = "self.a\n" + "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))) + "\n"
        if ".backward(" not in text:
            continue
        token = _backward_token(text)
        if token is None:
            continue  # not Python: no tree, no summary either way
        compared += 1
        assert composes_calls(text) == token, repr(text)
    assert compared > 500
