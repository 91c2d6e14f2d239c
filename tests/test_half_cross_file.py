"""AMP103 across files (amplint/analysis/project/half_callees.py): a model cast to half in one
file and passed to a training function of another file that calls it under autocast.

tests/projects/half_deit_engine: facebookresearch/deit layout (main.py builds the model and
calls `train_one_epoch` / `evaluate` of engine.py; engine.py runs `model(samples)` under
`torch.cuda.amp.autocast()`; models.py). DeiT has no `--half` option; the project adds one
(`model.half()` under `if args.half:`), the mistake the rule is about. Twins: the engine without
autocast (engine.py edited only); the half model passed only to `evaluate`, which runs no region.
"""

from __future__ import annotations



from amplint.analysis.diagnostics import Severity
from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import assert_warm_run_follows_an_edit, load

SETTINGS = Settings.default()
NAME = "half_deit_engine"
FINDING = (f"{NAME}/main.py", 25, "AMP103")
NO_REGION = ("        with torch.cuda.amp.autocast():\n", "        if True:\n")
EVAL_ONLY = ("        train_stats = train_one_epoch(\n"
             "            model, criterion, [], optimizer, device, epoch, loss_scaler,\n        )\n",
             "        train_stats = evaluate([], model, device)\n")


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics if d.code == "AMP103")


def test_half_model_passed_to_a_training_function_that_runs_it_under_autocast():
    results = lint_project(load(NAME), SETTINGS)
    assert findings(results) == [FINDING]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP103"]
    assert "passed to `train_one_epoch` (line 33), which calls it under the autocast region at engine.py:20" in diag.message
    assert diag.severity is Severity.ERROR  # the file creates the GradScaler it passes along
    assert diag.fix is None  # a model: a suggestion, as within a file


def test_twin_engine_without_autocast_is_silent():
    assert findings(lint_project(load(NAME, (NO_REGION,)), SETTINGS)) == []


def test_twin_half_model_only_evaluated_is_silent():
    files = load(NAME, (EVAL_ONLY,))
    assert "train_one_epoch(\n" not in files[f"{NAME}/main.py"]
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_local_function_of_the_same_name_is_not_the_import():
    files = load(NAME, (("def main(args):\n",
                         "def main(args):\n    def train_one_epoch(*a):\n        return a\n"),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_warm_run_after_editing_only_the_engine(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "engine.py", (NO_REGION,), "AMP103", [("main.py", 25, "AMP103")])