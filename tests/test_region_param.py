"""A region opened through a parameter (amplint/analysis/project/context_params.py): timm's
`amp_autocast = partial(torch.autocast, ...)` (or `suppress`) bound in the training script,
passed as a keyword to the epoch loop of another file, opened there as `with amp_autocast():`.

tests/projects/region_param_timm imitates the amp_autocast idiom of
huggingface/pytorch-image-models' train.py, split as timm-based repositories do (train.py,
engine/train_loop.py with `train_one_epoch(..., amp_autocast=suppress, ...)`, models/, losses.py).
The region reaches the loss of losses.py, `F.binary_cross_entropy` on probabilities (AMP102);
the corrected twin uses the with-logits form.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import code_findings, assert_warm_run_follows_an_edit, load, project_findings

SETTINGS = Settings.default()
NAME = "region_param_timm"
FINDING = ("losses.py", 15, "AMP102")
PARTIAL = "        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=torch.float16)\n"


def amp102(files):
    return code_findings(files, "AMP102", SETTINGS)


def test_a_partial_of_autocast_passed_to_the_loop_of_another_file_opens_its_region():
    found, results = amp102(load(NAME))
    assert found == [FINDING]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"]
    assert "under amp_autocast() at engine/train_loop.py:14 (bound to `amp_autocast` at train.py:32)" in message


def test_twin_with_the_logits_form_is_silent():
    files = load(NAME, (("F.binary_cross_entropy(torch.sigmoid(x), target)",
                         "F.binary_cross_entropy_with_logits(x, target)"),))
    assert amp102(files)[0] == []


def test_suppress_on_every_path_opens_nothing():
    assert amp102(load(NAME, ((PARTIAL, ""),)))[0] == []


def test_a_partial_of_another_context_manager_opens_nothing():
    files = load(NAME, ((PARTIAL, "        amp_autocast = partial(torch.cuda.device, device.index)\n"),))
    assert amp102(files)[0] == []


def test_a_value_the_flow_cannot_read_opens_nothing():
    """`amp_autocast=make_ctx(args)` of a library: not known, no region, no guess."""
    files = load(NAME, (("amp_autocast=amp_autocast, loss_scaler", "amp_autocast=make_ctx(args), loss_scaler"),
                        ("from functools import partial\n", "from functools import partial\nfrom ctxlib import make_ctx\n")))
    assert amp102(files)[0] == []


def test_warm_run_follows_an_edit_of_the_script_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "train.py", ((PARTIAL, ""),), "AMP102", [FINDING])


BACKWARD_INSIDE = ("            loss = loss_fn(output, target)\n",
                   "            loss = loss_fn(output, target)\n            loss.backward()\n")


def test_the_opening_file_itself_sees_the_region():
    """The rules of engine/train_loop.py read `with amp_autocast():` as the region too
    (EntryParamRegion): a backward inside it is AMP104 there."""
    results = lint_project(load(NAME, (BACKWARD_INSIDE,)), SETTINGS)
    found = [f for f in project_findings(results) if f[2] == "AMP104"]
    assert found == [("engine/train_loop.py", 17, "AMP104")]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP104"]
    assert "amp_autocast() at engine/train_loop.py:14 (bound to `amp_autocast` at train.py:32)" in message
    results = lint_project(load(NAME, (BACKWARD_INSIDE, (PARTIAL, ""))), SETTINGS)
    assert [f for f in project_findings(results) if f[2] == "AMP104"] == []


def test_a_parameter_rebound_in_the_loop_opens_nothing():
    """`amp_autocast = suppress` in the loop's own body (unconditionally or under an `if`): the
    `with` may not hold what the call passed, so no region is guessed (a reviewer's probe)."""
    for rebind in ("    amp_autocast = suppress\n", "    if args is None:\n        amp_autocast = suppress\n"):
        files = load(NAME)
        path = f"{NAME}/engine/train_loop.py"
        text = files[path]
        head, tail = text.split("    for ", 1)
        files[path] = head + rebind + "    for " + tail
        assert amp102(files)[0] == [], rebind
