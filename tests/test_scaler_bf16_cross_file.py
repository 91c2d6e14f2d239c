"""AMP124 across files (amplint/analysis/project/scaler_regions.py): the GradScaler is created in
one file and passed to a training function of another file, whose every autocast region runs
in bfloat16. The scaler's `scale` reaches the caller through the cross-file protocol
(EntryScaler); the callee file's regions come from its region summary.

tests/projects/scaler_mae_bf16: facebookresearch/mae fine-tuning layout (main_finetune.py builds
the scaler and calls `train_one_epoch` / `evaluate` of engine_finetune.py, util/misc.py). MAE
itself wraps the scaler in `NativeScalerWithGradNormCount` and uses float16; here the engine
uses `torch.autocast('cuda', dtype=torch.bfloat16)` and a plain `torch.amp.GradScaler`, the
shape of its bf16 forks. Twins: the scaler created disabled; one region of the engine float16.
"""

from __future__ import annotations



from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import assert_warm_run_follows_an_edit, load

SETTINGS = Settings.default()
NAME = "scaler_mae_bf16"
FINDING = (f"{NAME}/main_finetune.py", 22, "AMP124")
ENGINE_FP16 = ("        with torch.autocast('cuda', dtype=torch.bfloat16):\n            outputs",
               "        with torch.autocast('cuda', dtype=torch.float16):\n            outputs")


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics if d.code == "AMP124")


def test_scaler_passed_to_a_bfloat16_training_function_of_another_file():
    results = lint_project(load(NAME), SETTINGS)
    assert findings(results) == [FINDING]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP124"]
    # the other end by path:line: the callee's own bfloat16 region
    assert ("`train_one_epoch` (autocast at engine_finetune.py:17), through the call at line 24"
            in diag.message)
    assert diag.fix is not None  # the same unsafe edit as within a file: enabled=False


def test_twin_scaler_created_disabled_is_silent():
    files = load(NAME, (("torch.amp.GradScaler('cuda')", "torch.amp.GradScaler('cuda', enabled=False)"),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_twin_scaler_gated_on_the_dtype_is_silent():
    files = load(NAME, (("torch.amp.GradScaler('cuda')",
                         "torch.amp.GradScaler('cuda', enabled=(args.amp_dtype == 'float16'))"),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_float16_region_in_the_engine_keeps_the_scaler_needed():
    files = load(NAME, (ENGINE_FP16,))
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_training_function_opening_no_region_itself_is_not_enough():
    # evaluate() still opens a bfloat16 region in the same file: the file's regions say
    # nothing about the losses train_one_epoch scales
    files = load(NAME, (("        with torch.autocast('cuda', dtype=torch.bfloat16):\n            outputs",
                         "        if True:\n            outputs"),))
    assert "dtype=torch.bfloat16" in files[f"{NAME}/engine_finetune.py"]
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_region_in_the_scalers_own_file_is_left_to_the_file_rule():
    # a float16 region next to the scaler: the file is mixed, nothing is reported
    files = load(NAME, (("        test_stats = evaluate([], model, device)\n",
                         "        test_stats = evaluate([], model, device)\n"
                         "        with torch.autocast('cuda', dtype=torch.float16):\n"
                         "            model(torch.zeros(1, 768, device=device))\n"),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_warm_run_after_editing_only_the_engine(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "engine_finetune.py", (ENGINE_FP16,), "AMP124", [("main_finetune.py", 22, "AMP124")])