"""The GradScaler protocol across files through a called value (scaler_summaries.py, the
"value" calls): a parameter or local called between `scaler.scale(loss).backward()` and
`scaler.step(optimizer)` that the class flow resolves to exactly one project class, whose
`__call__` clips the gradients.

tests/projects/scaler_detr_clipper: facebookresearch/detr layout (main.py builds the pieces and
calls engine.py's `train_one_epoch`; util/misc.py), in a fork that adds a GradScaler and moves
the clipping into a callable `GradClipper` object passed as `grad_hook`. The clip runs on scaled
gradients: AMP120 at the call in engine.py. Twins: the engine unscales first; the hook is a
`GradNormMeter` (it measures, never clips); the hook may be either class (not known exactly).
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_detr_clipper"
FINDING = ("engine.py", 20, "AMP120")
HOOK = "    grad_hook = utils.GradClipper(args.clip_max_norm) if args.clip_max_norm > 0 else None\n"


def amp120(files):
    return code_findings(files, "AMP120")


def test_callable_clipper_passed_as_a_parameter_clips_scaled_gradients():
    found, results = amp120(load(NAME))
    assert found == [FINDING]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP120"]
    assert "clip_grad_norm_" in diag.message and "misc.py:12" in diag.message


def test_twin_unscaled_before_the_hook_is_silent():
    files = load(NAME, (("        if grad_hook is not None:\n",
                         "        scaler.unscale_(optimizer)\n        if grad_hook is not None:\n"),))
    assert amp120(files)[0] == []


def test_twin_a_hook_that_only_measures_is_silent():
    files = load(NAME, ((HOOK, HOOK.replace("utils.GradClipper(args.clip_max_norm)", "utils.GradNormMeter()")),))
    assert amp120(files)[0] == []


def test_a_hook_that_may_be_either_class_is_not_guessed():
    files = load(NAME, ((HOOK, "    grad_hook = utils.GradClipper(args.clip_max_norm) if args.clip_max_norm > 0 "
                               "else utils.GradNormMeter()\n"),))
    assert amp120(files)[0] == []


def test_an_instance_made_in_the_training_function_itself():
    files = load(NAME, (("    meter = utils.SmoothedValue()\n",
                         "    meter = utils.SmoothedValue()\n    grad_hook = utils.GradClipper(0.1)\n"),))
    assert amp120(files)[0] == [("engine.py", 21, "AMP120")]
