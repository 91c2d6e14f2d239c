"""AMP150 through a function that runs its argument forward without grad
(facts/nograd_methods.nograd_params, project/nograd_entries.note_nograd_function): FixMatch's
pseudo-labelling, `@torch.no_grad() def guess_labels(model, weak, threshold)` in utils/, called
from the training loop's autocast region, then the grad forward of the same model there.

tests/projects/nograd_fixmatch imitates kekmodel/FixMatch-pytorch's layout (train.py with the
`train()` loop, models/wideresnet.py with `build_wideresnet`, utils/__init__.py re-exporting
utils/misc.py's helpers), its apex AMP replaced by torch.autocast + GradScaler.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "nograd_fixmatch"
FINDING = ("train.py", 17, "AMP150")
IMPORT = "from utils.misc import AverageMeter, guess_labels\n"
CALL = "guess_labels(model, weak, args.threshold)"
DECORATED = "@torch.no_grad()\ndef guess_labels(model, weak, threshold):\n    probs = torch.softmax(model(weak).float(), dim=-1)\n"


def amp150(*edits):
    return code_findings(load(NAME, edits), "AMP150", SETTINGS)


def test_the_pseudo_label_forward_of_another_file_pairs_with_the_grad_forward():
    found, results = amp150()
    assert found == [FINDING]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP150"]
    assert "through `guess_labels` (defined at utils/misc.py:14), which runs its `model` under no_grad" in message


@pytest.mark.parametrize("imported, call", [
    ("from utils import AverageMeter, guess_labels\n", CALL),  # re-export through utils/__init__.py
    ("import utils.misc as misc\nfrom utils.misc import AverageMeter\n", "misc." + CALL),
    ("import utils\nfrom utils.misc import AverageMeter\n", "utils.misc." + CALL),
    ("from utils.misc import AverageMeter, guess_labels as pseudo\n", "pseudo(model, weak, args.threshold)"),
    (IMPORT, "guess_labels(weak=weak, model=model, threshold=args.threshold)"),
])
def test_import_and_call_forms(imported, call):
    shift = imported.count("\n") - 1
    assert amp150((IMPORT, imported), (CALL, call))[0] == [("train.py", 17 + shift, "AMP150")]


def test_a_with_no_grad_block_in_the_helper_counts_too():
    body = ("def guess_labels(model, weak, threshold):\n    with torch.no_grad():\n"
            "        probs = torch.softmax(model(weak).float(), dim=-1)\n")
    rest = "    max_probs, targets = probs.max(dim=-1)\n    return"
    edits = ((DECORATED, body), (rest, "    " + rest.replace("\n    return", "\n        return")))
    assert amp150(*edits)[0] == [FINDING]


@pytest.mark.parametrize("edits", [
    # the fix: no autocast cache
    ((('torch.autocast("cuda", enabled=args.amp)', 'torch.autocast("cuda", enabled=args.amp, cache_enabled=False)'),)),
    # the helper runs with grad (no decorator)
    (((DECORATED, DECORATED.replace("@torch.no_grad()\n", "")),)),
    # pseudo-labels from another model (an EMA teacher)
    (((CALL, "guess_labels(ema_model, weak, args.threshold)"),)),
    # the helper binds its parameter again before the forward
    (((DECORATED, DECORATED.replace("    probs =", "    model = model.teacher\n    probs =")),)),
    # the no_grad block ends before the forward
    (((DECORATED, "def guess_labels(model, weak, threshold):\n    with torch.no_grad():\n        pass\n"
                  "    probs = torch.softmax(model(weak).float(), dim=-1)\n"),)),
    # grad back on around the forward inside the no_grad function
    (((DECORATED, DECORATED.replace("    probs =", "    with torch.enable_grad():\n        probs =")),
      ("    max_probs, targets = probs.max(dim=-1)\n    return", "        max_probs, targets = probs.max(dim=-1)\n        return"))),
    (((DECORATED, DECORATED.replace("@torch.no_grad()", "@torch.inference_mode(False)")),)),
    # the caller's own parameter of the helper's name
    (((IMPORT, "from utils.misc import AverageMeter, guess_labels\n"),
      ("def train(args, labeled, unlabeled, model, optimizer, scaler):",
       "def train(args, labeled, unlabeled, model, optimizer, scaler, guess_labels=None):"))),
])
def test_clean_twins_stay_silent(edits):
    assert amp150(*edits)[0] == []


def test_same_file_function():
    source = (
        "import torch\n"
        "@torch.inference_mode()\n"
        "def teacher_logits(net, x):\n"
        "    return net.forward(x)\n"
        "def step(model, x, y):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        soft = teacher_logits(model, x)\n"
        "        out = model(y)\n"
        "    return out, soft\n"
    )
    lines = [d.line for d in lint_source("t.py", source, SETTINGS).diagnostics if d.code == "AMP150"]
    assert lines == [8]
    off = source.replace("@torch.inference_mode()\n", "")
    assert [d for d in lint_source("t.py", off, SETTINGS).diagnostics if d.code == "AMP150"] == []
    for other in (source.replace("    return net.forward(x)\n", "    with torch.enable_grad():\n        return net.forward(x)\n"),
                  source.replace("def step(model, x, y):", "def step(model, x, y, teacher_logits):")):
        assert [d for d in lint_source("t.py", other, SETTINGS).diagnostics if d.code == "AMP150"] == []


def test_warm_run_follows_an_edit_of_the_helper_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "utils/misc.py",
                                    ((DECORATED, DECORATED.replace("@torch.no_grad()\n", "")),), "AMP150", [FINDING])
