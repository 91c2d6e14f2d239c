"""AMP121 in a step helper whose scaler is a parameter (amplint/analysis/rules/
amp121_scaler_update_missing.py `_callers_scaler`).

tests/projects/scaler_swin_timed_step: microsoft/Swin-Transformer layout (main.py's
`train_one_epoch` scales, unscales, clips, then calls `optimizer_step(optimizer, scaler=scaler)`
of optimizer.py and updates right after it; the helper is wrapped by a project decorator
factory, `@timed("optimizer")` of utils/profiling.py, with functools.wraps). The helper steps
once per call a scaler its caller passes: `update()` is the caller's, so nothing is reported
there; the project pass composes the call through the decorator and sees the update after it.
Twins: the caller without `scaler.update()` (reported at its call, through the helper); the
helper stepping a GradScaler of its own module instead (reported there); the
helper stepping in a loop of its own (the second step of one call raises: reported there, and
at the call, whose update comes only after that loop).
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

SETTINGS = Settings.default()
NAME = "scaler_swin_timed_step"
STEP = ("scaler_swin_timed_step/optimizer.py", 16, "AMP121")


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics if d.code.startswith("AMP12"))


def test_step_helper_with_the_callers_scaler_is_silent():
    files = load(NAME)
    assert "@timed(\"optimizer\")\ndef optimizer_step(optimizer, scaler=None):\n" in files[f"{NAME}/optimizer.py"]
    assert findings(lint_project(files, SETTINGS)) == []


def test_twin_caller_without_update_is_reported_at_its_call():
    results = lint_project(load(NAME, (("        scaler.update()\n", ""),)), SETTINGS)
    assert findings(results) == [(f"{NAME}/main.py", 32, "AMP121")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP121"]
    assert diag.message.startswith("`scaler.step(...)` (optimizer.py:16, through the call at line 32) "
                                   "without `scaler.update()`")
    assert diag.fix is None  # where the update belongs is the caller's loop: no edit


def test_twin_helper_stepping_its_own_modules_scaler_is_reported():
    # the scaler is not the caller's: a GradScaler of optimizer.py that nothing updates
    files = load(NAME, (("@timed(\"optimizer\")\ndef optimizer_step(optimizer, scaler=None):\n",
                         "scaler = torch.amp.GradScaler(\"cuda\")\n\n\n@timed(\"optimizer\")\n"
                         "def optimizer_step(optimizer):\n"),))
    assert findings(lint_project(files, SETTINGS)) == [(STEP[0], STEP[1] + 3, "AMP121")]


def test_twin_helper_stepping_in_its_own_loop_is_reported():
    files = load(NAME, (("    if scaler is not None:\n        scaler.step(optimizer)\n",
                         "    if scaler is not None:\n        for _ in range(2):\n"
                         "            scaler.step(optimizer)\n"),))
    assert findings(lint_project(files, SETTINGS)) == [
        (f"{NAME}/main.py", 32, "AMP121"), (STEP[0], STEP[1] + 1, "AMP121")]


def test_twin_call_leaving_the_scaler_at_its_none_default_is_reported_at_the_call():
    # `optimizer_step(optimizer)`: the helper's `if scaler is not None:` arm never runs for
    # this call, so its `else: optimizer.step()` steps gradients main.py scaled (AMP127). The
    # arm is pruned for this call only (scaler_renaming.none_defaults): the fix is the call's.
    results = lint_project(load(NAME, (("optimizer_step(optimizer, scaler=scaler)",
                                        "optimizer_step(optimizer)"),)), SETTINGS)
    assert findings(results) == [(f"{NAME}/main.py", 32, "AMP127")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP127"]
    assert "optimizer.py:18, through this call, which leaves `scaler` at its default `None`" in diag.message
    assert diag.fix is None


def test_twin_helper_rebinding_its_none_default_is_silent():
    # `scaler = scaler or ...`: the test no longer says what the call passed, nothing is pruned
    files = load(NAME, (("optimizer_step(optimizer, scaler=scaler)", "optimizer_step(optimizer)"),
                        ("    if scaler is not None:\n",
                         "    scaler = scaler or DEFAULT_SCALER\n    if scaler is not None:\n")))
    assert findings(lint_project(files, SETTINGS)) == []


def test_twin_call_passing_the_scaler_positionally_is_silent():
    files = load(NAME, (("optimizer_step(optimizer, scaler=scaler)", "optimizer_step(optimizer, scaler)"),))
    assert findings(lint_project(files, SETTINGS)) == []
