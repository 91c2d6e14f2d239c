"""A training script whose loop is top-level code (karpathy/llama2.c `train.py` shape: config,
model, optimizer, GradScaler and the `while True:` loop at module level, no main()), calling a
helper of another file that unscales again (tests/projects/scaler_llama2c_script,
monitoring.py). A module's own statements are read as one more caller of the cross-file
protocol summaries (scaler_remote.MODULE_KEY), so the helper's events compose at the call as
they do for a loop inside a function. Each twin stays silent."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.facts.scaler_remote import MODULE_KEY
from amplint.analysis.project import lint_project

from project_files import assert_warm_run_follows_an_edit, code_findings, load

NAME = "scaler_llama2c_script"
HELPER_NO_UNSCALE = ("    scaler.unscale_(optimizer)\n", "")
# the variant unscales once, in the helper only, which runs after the clip: no second unscale,
# but the clip then sees scaled gradients (AMP120), also composed from the other file
SCRIPT_NO_UNSCALE = ("        scaler.unscale_(optimizer)\n        torch.nn", "        torch.nn")
# the same loop under `if __name__ == "__main__":` (module-level statements, nested)
MAIN_GUARD = ("iter_num = 0\nwhile True:", "iter_num = 0\nif __name__ == \"__main__\":\n  while True:")


def amp123(files):
    return code_findings(files, "AMP123")


def test_top_level_loop_composes_the_helper_of_another_file():
    found, results = amp123(load(NAME))
    assert found == [("train.py", 40, "AMP123")]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP123"]
    assert "(`scaler.unscale_(...)` at monitoring.py:6, through this call)" in message
    assert "`scaler.unscale_` at line 37 already ran" in message


def test_first_unscale_in_the_helper_is_named_where_it_is():
    # the helper logs before the script's own unscale and clip: the second unscale is local
    clip = ("    if grad_clip != 0.0:\n        scaler.unscale_(optimizer)\n"
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)\n")
    log = "        print(iter_num, grad_norm_report(model, optimizer, scaler))\n"
    files = load(NAME, [(clip, ""), (log, log + clip)])
    found, results = amp123(files)
    assert found == [("train.py", 39, "AMP123")]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP123"]
    assert "`scaler.unscale_` at monitoring.py:6, through the call at line 37, already ran" in message


def test_module_key_names_no_function():
    assert not MODULE_KEY.isidentifier()  # no `def` can take a module's key


def test_helper_twin_without_unscale_is_silent():
    files = load(NAME, [HELPER_NO_UNSCALE])
    assert "unscale_" not in files[f"{NAME}/monitoring.py"]
    assert amp123(files)[0] == []


def test_script_unscaling_only_in_the_helper_after_the_clip():
    files = load(NAME, [SCRIPT_NO_UNSCALE])
    assert files[f"{NAME}/train.py"].count("unscale_") == 0
    found, results = amp123(files)
    assert found == []
    assert code_findings(files, "AMP120")[0] == [("train.py", 37, "AMP120")]


def test_loop_under_a_main_guard_is_read_too():
    files = load(NAME, [MAIN_GUARD])
    text = files[f"{NAME}/train.py"]
    lines = text.split("\n")
    start = lines.index("  while True:")
    lines[start + 1:] = ["  " + line if line else line for line in lines[start + 1:]]
    files[f"{NAME}/train.py"] = "\n".join(lines)
    assert amp123(files)[0] == [("train.py", 41, "AMP123")]


def test_class_body_calls_have_no_module_key():
    files = {
        "p/helpers.py": "def unscale_all(optimizer, scaler):\n    scaler.unscale_(optimizer)\n",
        "p/train.py": (
            "import torch\nfrom helpers import unscale_all\n\n"
            "class Config:\n    opt = torch.optim.SGD([], lr=0.1)\n"
            "    scaler = torch.amp.GradScaler('cuda')\n"
            "    scaler.unscale_(opt)\n    unscale_all(opt, scaler)\n"
        ),
    }
    results = lint_project(files, Settings.default())
    assert not [d for r in results.values() for d in r.diagnostics if d.code == "AMP123"]


def test_warm_run_follows_an_edit_of_the_helper(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, NAME, "monitoring.py", [HELPER_NO_UNSCALE], "AMP123",
        [("train.py", 40, "AMP123")],
    )
