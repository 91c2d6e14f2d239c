"""A region opened through a `@contextmanager` function (facts/context_functions.py,
project/context_openers.py): the function yields inside `with torch.autocast(...)`, and
`with f(...):` runs its body under that region, in the function's own file or in another.

tests/projects/ctxmgr_olmo imitates allenai/OLMo's layout (olmo/config.py TrainConfig with its
`autocast_precision` property, olmo/torch_util.py helpers, olmo/model.py, olmo/train.py Trainer
with `model_forward` / `train_batch` over micro-batches, scripts/train.py), with the autocast
opened by `autocast_context(cfg)` in olmo/torch_util.py (float32 on one path: maybe enabled).
The region reaches olmo/loss.py's `F.binary_cross_entropy` on probabilities (AMP102) through
the Trainer's own `model_forward`; a backward moved inside the `with` is AMP104 in train.py.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "ctxmgr_olmo"
AMP102 = ("olmo/loss.py", 7, "AMP102")
IMPORT = "from .torch_util import autocast_context\n"
WITH = "            with autocast_context(self.cfg):\n"
BACKWARD_INSIDE = ("                loss = self.model_forward(micro)\n            loss.backward()\n",
                   "                loss = self.model_forward(micro)\n                loss.backward()\n")
OPENS = '        with torch.autocast("cuda", dtype=cfg.autocast_precision):\n'


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def test_the_region_reaches_the_loss_of_another_file_through_the_trainers_own_method():
    found, results = findings("AMP102")
    assert found == [AMP102]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"]
    assert "autocast_context() at olmo/train.py:25" in message
    assert "`autocast_context()` of olmo/torch_util.py:11 yields under the autocast region at " \
           "olmo/torch_util.py:15 on some paths" in message


def test_the_calling_file_sees_the_region_itself():
    found, _ = findings("AMP104", BACKWARD_INSIDE)
    assert found == [("olmo/train.py", 27, "AMP104")]


@pytest.mark.parametrize("imported, written", [
    ("from olmo.torch_util import autocast_context\n", "autocast_context"),
    ("from olmo import autocast_context\n", "autocast_context"),  # re-export through olmo/__init__.py
    ("from . import autocast_context\n", "autocast_context"),
    ("from . import torch_util\n", "torch_util.autocast_context"),
    ("import olmo.torch_util as tu\n", "tu.autocast_context"),
    ("import olmo.torch_util\n", "olmo.torch_util.autocast_context"),
    ("from .torch_util import autocast_context as amp_ctx\n", "amp_ctx"),
])
def test_import_forms(imported, written):
    edits = ((IMPORT, imported), (WITH, f"            with {written}(self.cfg):\n"))
    assert findings("AMP102", *edits)[0] == [AMP102]
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == [("olmo/train.py", 27, "AMP104")]


def test_decorator_spelled_from_contextlib():
    edits = (("import contextlib\n", "from contextlib import contextmanager\n"),
             ("@contextlib.contextmanager\n", "@contextmanager\n"))
    assert findings("AMP102", *edits)[0] == [AMP102]


def test_twin_with_the_logits_form_is_silent():
    assert findings("AMP102", ("F.binary_cross_entropy(torch.sigmoid(z_logits), z_target)",
                               "F.binary_cross_entropy_with_logits(z_logits, z_target)"))[0] == []


@pytest.mark.parametrize("edits", [
    # the context manager opens autocast disabled
    (((OPENS, '        with torch.autocast("cuda", dtype=cfg.autocast_precision, enabled=False):\n'),)),
    # it yields outside its autocast (a warm-up forward, then the body in float32)
    (((OPENS + "            yield\n", OPENS + "            pass\n        yield\n"),)),
    # not a context manager: a generator the `with` could not enter is not read as one
    ((("@contextlib.contextmanager\n", ""),)),
    # another context manager of the same name in the calling file
    (((IMPORT, "import contextlib\n\n\n@contextlib.contextmanager\ndef autocast_context(cfg):\n    yield\n"),)),
])
def test_clean_twins_stay_silent(edits):
    assert findings("AMP102", *edits)[0] == []
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == []


def test_a_parameter_of_the_same_name_opens_nothing():
    edits = (("    def train_batch(self, batch):\n", "    def train_batch(self, batch, autocast_context=None):\n"),)
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == []


def test_a_module_level_rebinding_of_the_imported_name_opens_nothing():
    edits = ((IMPORT, IMPORT + "\nautocast_context = contextlib.nullcontext\n"),
             ("from dataclasses import dataclass\n", "import contextlib\nfrom dataclasses import dataclass\n"))
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == []


def test_a_same_file_name_bound_again_in_the_function_opens_nothing():
    """A parameter or a local of the context manager's name is not the file's function (the
    call graph resolves a plain name to the def whatever else binds it)."""
    source = (
        "import contextlib\n"
        "import torch\n"
        "@contextlib.contextmanager\n"
        "def amp():\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        yield\n"
        "def by_param(model, x, amp):\n"
        "    with amp():\n"
        "        model(x).mean().backward()\n"
        "def by_local(model, x):\n"
        "    amp = contextlib.nullcontext\n"
        "    with amp():\n"
        "        model(x).mean().backward()\n"
        "def own(model, x):\n"
        "    with amp():\n"
        "        model(x).mean().backward()\n"
    )
    lines = [d.line for d in lint_source("t.py", source, SETTINGS).diagnostics if d.code == "AMP104"]
    assert lines == [16]


def test_enabled_on_every_yield_is_enabled_not_maybe():
    edits = (('    if cfg.precision == "fp32":\n        yield\n    else:\n', "    if True:\n"),)
    found, results = findings("AMP102", *edits)
    assert found == [AMP102]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"]
    assert "on some paths" not in message


def test_same_file_context_manager_method_and_function():
    """Without the project pass: a `@contextmanager` function of the file and a method called
    through `self`, each yielding under autocast; the same with `enabled=False` is silent."""
    source = (
        "import contextlib\n"
        "import torch\n"
        "@contextlib.contextmanager\n"
        "def amp(enabled):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16, enabled=enabled):\n"
        "        yield\n"
        "class Trainer:\n"
        "    @contextlib.contextmanager\n"
        "    def ctx(self):\n"
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            yield\n"
        "    def step(self, model, x):\n"
        "        with self.ctx():\n"
        "            model(x).mean().backward()\n"
        "        with amp(self.enabled):\n"
        "            model(x).mean().backward()\n"
    )
    lines = [d.line for d in lint_source("t.py", source, SETTINGS).diagnostics if d.code == "AMP104"]
    assert lines == [14, 16]
    off = source.replace("dtype=torch.float16)", "dtype=torch.float16, enabled=False)").replace(
        "enabled=enabled)", "enabled=False)")
    assert [d for d in lint_source("t.py", off, SETTINGS).diagnostics if d.code == "AMP104"] == []


def test_no_fix_edits_the_context_managers_call():
    source = (
        "import contextlib\n"
        "import torch\n"
        "@contextlib.contextmanager\n"
        "def amp():\n"
        "    with torch.autocast('cuda'):\n"
        "        yield\n"
        "def step(model, x):\n"
        "    with amp():\n"
        "        loss = model(x).mean()\n"
        "        loss.backward()\n"
    )
    (found,) = [d for d in lint_source("t.py", source, SETTINGS).diagnostics if d.code == "AMP104"]
    assert found.fix is None


def test_warm_run_follows_an_edit_of_the_context_manager_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "olmo/torch_util.py", ((OPENS + "            yield\n",
                                    OPENS + "            pass\n        yield\n"),), "AMP102", [AMP102])


def test_the_files_naming_an_opener_come_from_the_passs_one_scan_of_the_name():
    """The files whose text names `autocast_context` are found by the pass's scan view (one
    scan, kept for the pass), which both readers of them use: the holder seeds
    (context_holders.py, `ctx = autocast_context(...)` then `with ctx:`) and the opener seeds
    (on start: each its own loop over every text, no scan recorded). The finding is the same."""
    from amplint.analysis.project import build, scan_view

    project = build(load(NAME), SETTINGS)
    assert scan_view.scans_made(project).get("autocast_context") == 1
    assert [path for path, _ in scan_view.texts_holding(project, "autocast_context")] == [
        path for path in project.python if "autocast_context" in project.files[path]]
    assert findings("AMP102")[0] == [AMP102]
