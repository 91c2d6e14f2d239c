"""The GradScaler protocol across files (amplint/analysis/project/scaler_summaries.py): multi-file
projects shaped like real trainers, where the hazard needs a helper, mixin or step function of
another file. Each flags its hazard at the call in the caller's file; each corrected twin (the
fix made in the *other* file only) stays silent. Through the CLI and its cache, editing only the
helper's file changes the caller's finding on a warm run.

- tests/projects/scaler_trainer_mixins: huggingface/transformers `Trainer` shape, the clip and
  the step in a mixin module (optimization.py): AMP120.
- tests/projects/scaler_accelerate_utils: huggingface/accelerate examples/complete_nlp_example.py
  shape, `log_grad_norm` in utils.py unscales, the loop's `clip_grad_norm_` unscales again: AMP123.
- tests/projects/scaler_split_fit: `train_step` / `end_epoch` in engine/steps.py, `fit` in
  train.py (the pytorch-template / DETR `engine.py` split): AMP121.
- tests/projects/scaler_hooks_trainer: facebookresearch/detectron2 engine/ layout, `run_step`
  in train_loop.py, the scaler's update in a hooks mixin (hooks.py): AMP121 when the loop calls
  the hook after the iterations; its twin calls it per iteration (before composition across
  files, the twin was flagged "step without update", with a safe fix adding a second update).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import PROJECTS, load
from project_files import cli_findings as shared_cli_findings

SETTINGS = Settings.default()


def scaler_findings(results):
    return sorted(
        (path, d.line, d.code) for path, result in results.items() for d in result.diagnostics
        if d.code.startswith("AMP12")
    )


def messages(results, code):
    return [d.message for r in results.values() for d in r.diagnostics if d.code == code]


MIXIN_UNSCALES = (  # the twin: the mixin unscales before it clips (optimization.py only)
    "        if self.args.max_grad_norm > 0:\n            torch.nn",
    "        if self.args.max_grad_norm > 0:\n"
    "            self.scaler.unscale_(self.optimizer)\n            torch.nn",
)
HELPER_NO_UNSCALE = ("    accelerator.unscale_gradients(optimizer=optimizer)\n", "")
UPDATE_PER_STEP = (  # the twin: the step function updates, the epoch hook only schedules
    "    scaler.step(optimizer)\n    return",
    "    scaler.step(optimizer)\n    scaler.update()\n    return",
), ("    scheduler.step()\n    scaler.update()\n", "    scheduler.step()\n")


def test_mixin_in_another_file_clips_scaled_gradients():
    results = lint_project(load("scaler_trainer_mixins"), SETTINGS)
    assert scaler_findings(results) == [("scaler_trainer_mixins/trainer/trainer.py", 23, "AMP120")]
    (message,) = messages(results, "AMP120")
    assert "`torch.nn.utils.clip_grad_norm_(...)` at trainer/optimization.py:10, through this call" in message
    assert "`self.scaler.step` at trainer/optimization.py:13, through the call at line 24" in message
    assert not any(d.fix for r in results.values() for d in r.diagnostics)  # the edit is elsewhere


def test_mixin_twin_unscaling_first_is_silent():
    files = load("scaler_trainer_mixins", [MIXIN_UNSCALES])
    assert "self.scaler.unscale_" in files["scaler_trainer_mixins/trainer/optimization.py"]
    assert scaler_findings(lint_project(files, SETTINGS)) == []


def test_accelerate_helper_in_utils_unscales_before_the_loop_clips():
    results = lint_project(load("scaler_accelerate_utils"), SETTINGS)
    assert scaler_findings(results) == [
        ("scaler_accelerate_utils/complete_nlp_example.py", 27, "AMP123"),
    ]
    (message,) = messages(results, "AMP123")
    assert "`accelerator.unscale_gradients(...)` at utils.py:8, through the call at line 26" in message
    assert "unscale_() has already been called" in message


@pytest.mark.parametrize("edits", [
    [HELPER_NO_UNSCALE],
    [  # unscaled once every step, then clipped with torch's clip, which does not unscale
        ("            if step % args.log_every == 0:\n                log_grad_norm(",
         "            log_grad_norm("),
        ("            accelerator.clip_grad_norm_(model.parameters(), 1.0)\n",
         "            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"),
    ],
])
def test_accelerate_twins_are_silent(edits):
    files = load("scaler_accelerate_utils", edits)
    assert files != load("scaler_accelerate_utils")
    assert scaler_findings(lint_project(files, SETTINGS)) == []


def test_step_and_update_split_from_the_loop_across_files():
    results = lint_project(load("scaler_split_fit"), SETTINGS)
    assert scaler_findings(results) == [("scaler_split_fit/train.py", 16, "AMP121")]
    (message,) = messages(results, "AMP121")
    assert "(engine/steps.py:14, through the call at line 16)" in message
    assert "(engine/steps.py:20, through the call at line 17) only after the loop" in message


def test_split_fit_twin_updating_per_step_is_silent():
    files = load("scaler_split_fit", UPDATE_PER_STEP)
    assert "scaler.update()" not in files["scaler_split_fit/engine/steps.py"].split("def end_epoch")[1]
    assert scaler_findings(lint_project(files, SETTINGS)) == []


def test_a_callee_with_a_scaler_of_its_own_is_not_composed():
    """A helper creating its own GradScaler runs a protocol of its own per call."""
    files = load("scaler_split_fit", [(
        "def train_step(model, batch, criterion, optimizer, scaler):\n",
        "def train_step(model, batch, criterion, optimizer, unused):\n"
        "    scaler = torch.amp.GradScaler('cuda')\n",
    )])
    results = lint_project(files, SETTINGS)
    assert ("scaler_split_fit/train.py", 16, "AMP121") not in scaler_findings(results)


# -- through the CLI and its cache -----------------------------------------------------------
def cli_findings(root: Path, *args):
    return shared_cli_findings(root, *args, codes=("AMP12",))


@pytest.mark.parametrize("name, helper, edit, finding", [
    ("scaler_trainer_mixins", "trainer/optimization.py", MIXIN_UNSCALES,
     ("trainer/trainer.py", 23, "AMP120")),
    ("scaler_accelerate_utils", "utils.py", HELPER_NO_UNSCALE,
     ("complete_nlp_example.py", 27, "AMP123")),
])
def test_warm_run_after_editing_only_the_helper_file(tmp_path, name, helper, edit, finding):
    root = tmp_path / name
    shutil.copytree(os.path.join(PROJECTS, name), root)
    cache = str(tmp_path / "cache")
    assert cli_findings(root, "--cache-dir", cache) == [finding]
    assert cli_findings(root, "--cache-dir", cache) == [finding]  # warm, unchanged
    path = root / helper
    text = path.read_text()
    path.write_text(text.replace(*edit))
    assert cli_findings(root, "--cache-dir", cache) == []  # the caller's file did not change
    path.write_text(text)
    assert cli_findings(root, "--cache-dir", cache) == [finding]
    assert cli_findings(root, "--no-cache", "--jobs", "1") == [finding]


REEXPORTED = {
    "run.py": "from pkg.loops import fit_a\n",
    "pkg/__init__.py": "from .steps import train_step\n",
    "pkg/steps.py": (
        "def train_step(model, x, opt, scaler):\n"
        "    scaler.scale(model(x).sum()).backward()\n"
        "    scaler.step(opt)\n"
    ),
    "pkg/loops.py": (
        "import torch\n"
        "import pkg.steps as steps\n"
        "from . import train_step\n"
        "from .steps import train_step as ts\n"
        "def fit_a(model, loader, opt):\n"
        "    scaler = torch.amp.GradScaler()\n"
        "    for x in loader:\n"
        "        train_step(model, x, opt, scaler)\n"
        "    scaler.update()\n"
        "def fit_b(model, loader, opt):\n"
        "    scaler = torch.amp.GradScaler()\n"
        "    for x in loader:\n"
        "        ts(model, x, opt, scaler)\n"
        "    scaler.update()\n"
        "def fit_c(model, loader, opt):\n"
        "    scaler = torch.amp.GradScaler()\n"
        "    for x in loader:\n"
        "        steps.train_step(model, x, opt, scaler)\n"
        "    scaler.update()\n"
    ),
}


def test_a_step_function_reached_through_a_reexport_an_alias_and_a_module_attribute():
    results = lint_project(dict(REEXPORTED), SETTINGS)
    assert scaler_findings(results) == [
        ("pkg/loops.py", 8, "AMP121"), ("pkg/loops.py", 13, "AMP121"), ("pkg/loops.py", 18, "AMP121"),
    ]  # not the step function alone: its scaler is its caller's, one step per call (r5-blindfix)
    fixed = {  # the update moved into the step function (a second one after the loop would raise)
        **REEXPORTED, "pkg/steps.py": REEXPORTED["pkg/steps.py"] + "    scaler.update()\n",
        "pkg/loops.py": REEXPORTED["pkg/loops.py"].replace("    scaler.update()\n", ""),
    }
    assert scaler_findings(lint_project(fixed, SETTINGS)) == []


HOOK_PER_ITERATION = ("            self.run_step()\n        self.after_step()",
                      "            self.run_step()\n            self.after_step()")


def test_hooks_mixin_update_after_the_iterations():
    results = lint_project(load("scaler_hooks_trainer"), SETTINGS)
    assert scaler_findings(results) == [("scaler_hooks_trainer/engine/train_loop.py", 29, "AMP121")]
    (message,) = messages(results, "AMP121")
    assert "`self.scaler.update()` (engine/hooks.py:8, through the call at line 30) only after the loop" in message


def test_hooks_mixin_update_per_iteration_is_silent():
    """The update lives in another file's mixin: the step alone in `run_step` is not a step
    without update (it was, with a safe fix inserting a second update that would raise)."""
    files = load("scaler_hooks_trainer", [HOOK_PER_ITERATION])
    assert HOOK_PER_ITERATION[1] in files["scaler_hooks_trainer/engine/train_loop.py"]
    assert scaler_findings(lint_project(files, SETTINGS)) == []


BYPASS = {
    "train.py": (
        "import torch\n"
        "from optim_utils import apply_step\n"
        "def train(model, loader, optimizer):\n"
        "    scaler = torch.amp.GradScaler('cuda')\n"
        "    for x, y in loader:\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "        scaler.scale(loss).backward()\n"
        "        apply_step(optimizer)\n"
        "        scaler.update()\n"
    ),
    "optim_utils.py": (
        "def apply_step(optimizer):\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad(set_to_none=True)\n"
    ),
}


def test_a_helper_in_another_file_steps_the_optimizer_around_the_scaler():
    results = lint_project(dict(BYPASS), SETTINGS)
    assert scaler_findings(results) == [("train.py", 9, "AMP127")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP127"]
    assert "`optimizer.step()` (at optim_utils.py:2, through this call)" in diag.message
    assert diag.fix is None  # the edit would belong in optim_utils.py
    twin = {  # the helper steps through the scaler it is given
        "train.py": BYPASS["train.py"].replace("apply_step(optimizer)", "apply_step(scaler, optimizer)")
                                      .replace("        scaler.update()\n", ""),
        "optim_utils.py": (
            "def apply_step(scaler, optimizer):\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
        ),
    }
    assert scaler_findings(lint_project(twin, SETTINGS)) == []


# -- one parse per caller file ----------------------------------------------------------------
def counting_parses(monkeypatch):
    """{"first": ..., "protocol": ..., "other": ...}: text -> LibCST parses of it in the first
    pass, in the protocol pass (`scaler_entries`), and in the rest of the project pass and the
    final pass."""
    import libcst

    import amplint.run.project_inputs as project_inputs

    counts = {"first": {}, "protocol": {}, "other": {}}
    phase = ["first"]
    real_parse = libcst.parse_module

    def counting_parse(source, *args, **kwargs):
        counts[phase[0]][source] = counts[phase[0]].get(source, 0) + 1
        return real_parse(source, *args, **kwargs)

    def counted(function, name):
        def wrapped(*args, **kwargs):
            phase[0] = name
            try:
                return function(*args, **kwargs)
            finally:
                phase[0] = "other"  # the rest of the project pass, then the final pass
        return wrapped

    monkeypatch.setattr(libcst, "parse_module", counting_parse)
    monkeypatch.setattr(project_inputs, "build", counted(project_inputs.build, "other"))
    monkeypatch.setattr(project_inputs, "scaler_entries",
                        counted(project_inputs.scaler_entries, "protocol"))
    return counts, phase


def parses_of(counts, root: Path, only=None):
    """{phase: {caller file: parses}} for the project's caller files (`only`: these)."""
    from amplint.analysis.project.scaler_summaries import is_caller

    texts = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}
    callers = sorted(path for path, text in texts.items() if is_caller(text)
                     and (only is None or path in only))
    return {name: {path: found.get(texts[path], 0) for path in callers}
            for name, found in counts.items() if name != "other"}


@pytest.mark.parametrize("name, finding", [
    ("scaler_trainer_mixins", ("trainer/trainer.py", 23, "AMP120")),
    ("scaler_accelerate_utils", ("complete_nlp_example.py", 27, "AMP123")),
    ("scaler_hooks_trainer", ("engine/train_loop.py", 29, "AMP121")),
])
def test_the_protocol_pass_does_not_parse_a_caller_file_again(tmp_path, monkeypatch, name, finding):
    """The first pass makes a caller's protocol summary from the parse that lints it; the
    protocol pass (`scaler_entries`) parses only callee files the first pass did not
    summarise. Parses counted by text (LibCST's `parse_module`) in a cold `-j 1` run: once
    each in the first pass, none in the protocol pass. (The region pass's class flow may ask
    for a mixin's region summary, a parse of its own that this does not count.)"""
    root = tmp_path / name
    shutil.copytree(os.path.join(PROJECTS, name), root)
    counts, _ = counting_parses(monkeypatch)
    assert cli_findings(root, "--no-cache", "--jobs", "1") == [finding]
    found = parses_of(counts, root)
    assert finding[0] in found["first"]
    assert found == {"first": {p: 1 for p in found["first"]}, "protocol": {p: 0 for p in found["first"]}}


def test_the_cached_first_pass_result_carries_the_protocol_summary(tmp_path, monkeypatch):
    """Only the mixin's file edited: the trainer's first-pass result comes from the cache with
    its protocol summary, so the protocol pass composes the edited mixin without parsing the
    trainer (the final pass lints it again, with the new entries)."""
    root = tmp_path / "scaler_trainer_mixins"
    shutil.copytree(os.path.join(PROJECTS, "scaler_trainer_mixins"), root)
    cache = str(tmp_path / "cache")
    finding = ("trainer/trainer.py", 23, "AMP120")
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == [finding]
    mixin = root / "trainer" / "optimization.py"
    mixin.write_text(mixin.read_text().replace(*MIXIN_UNSCALES))
    counts, _ = counting_parses(monkeypatch)
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == []
    assert parses_of(counts, root, ["trainer/trainer.py", "trainer/optimization.py"]) == {
        "first": {"trainer/optimization.py": 1, "trainer/trainer.py": 0},
        "protocol": {"trainer/optimization.py": 0, "trainer/trainer.py": 0},
    }


# -- calls that can only end in files without a protocol word --------------------------------
DEAD_ENDS = {  # a trainer calling a step function (re-exported) and a checkpoint helper
    "train.py": (
        "import torch\n"
        "from pkg import io_utils, train_step\n"
        "from pkg.io_utils import save_checkpoint\n"
        "def fit(model, loader, opt):\n"
        "    scaler = torch.amp.GradScaler()\n"
        "    for x in loader:\n"
        "        train_step(model, x, opt, scaler)\n"
        "        save_checkpoint(model)\n"
        "        io_utils.save_checkpoint(model)\n"
        "    scaler.update()\n"
    ),
    "pkg/__init__.py": "# the training step: backward, then step\nfrom .steps import train_step\n",
    "pkg/steps.py": (
        "def train_step(model, x, opt, scaler):\n"
        "    scaler.scale(model(x).sum()).backward()\n"
        "    scaler.step(opt)\n"
    ),
    "pkg/io_utils.py": (
        "import torch\n"
        "def save_checkpoint(model):\n"
        "    torch.save(model.state_dict(), 'last.pt')\n"
    ),
}


def test_a_call_that_can_only_end_in_a_file_without_protocol_words_is_not_resolved():
    """`save_checkpoint` (imported directly, and as `io_utils.save_checkpoint`, which also
    passes `pkg/__init__.py` as a module attribute) can only lead into io_utils.py, which holds
    no word of the protocol: the protocol pass does not make its region summary; the entries
    (and the calls --show-regions counts as followed) are those of the pass that resolves it."""
    from amplint.analysis.project import build
    from amplint.analysis.project.scaler_resolution import scaler_entries, text_may_hold
    from amplint.analysis.project.scaler_summaries import local_summaries

    def protocol_pass(may_hold):
        files = dict(DEAD_ENDS)
        project = build(files, SETTINGS)
        followed: set = set()
        before = set(project.summaries)
        entries = scaler_entries(project, sorted(files), lambda wanted, force: local_summaries(
            files, wanted, force), followed, may_hold=text_may_hold(files) if may_hold else None)
        return entries, followed, set(project.summaries) - before

    entries, followed, summarised = protocol_pass(True)
    assert (entries, followed) == protocol_pass(False)[:2]
    assert [(e.call, e.callee) for e in entries["train.py"]] == [("train_step", "pkg/steps.py: train_step")]
    assert "pkg/io_utils.py" in protocol_pass(False)[2]
    assert "pkg/io_utils.py" not in summarised
    assert scaler_findings(lint_project(dict(DEAD_ENDS), SETTINGS)) == [
        ("train.py", 7, "AMP121"),  # the update only after the loop, through the call
    ]


def test_a_caller_file_over_the_parts_size_is_not_parsed_whole(tmp_path, monkeypatch):
    """A generated or vendored file over `large_files.PARTS_ABOVE` is linted in parts; the
    protocol pass must not parse it whole either (torch's own common_methods_invocations.py
    holds a caller word: one whole tree of it took the run to ~800 MB)."""
    from amplint.analysis import large_files
    from amplint.run import scaler_inputs

    body = "".join(f"def case_{i}(x):\n    return x * {i}\n\n\n" for i in range(40000))
    text = "from torch.amp import GradScaler\nscaler = GradScaler()\n\n\n" + body
    assert len(text) > large_files.PARTS_ABOVE
    path = tmp_path / "cases.py"
    path.write_text(text)
    parsed = []
    monkeypatch.setattr(scaler_inputs, "parse", lambda source: parsed.append(len(source)))
    assert scaler_inputs.summarize_file((str(path), False)) is None
    assert scaler_inputs.summarize_file((str(path), True)) is None
    assert parsed == []
    small = tmp_path / "loop.py"
    small.write_text("from torch.amp import GradScaler\nscaler = GradScaler()\n")
    scaler_inputs.summarize_file((str(small), False))
    assert parsed == [len(small.read_text())]  # the guard is about size, not the words
