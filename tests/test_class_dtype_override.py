"""A region's dtype read from a class attribute (`autocast("cuda", dtype=self.precision)`) is the
dtype of every class that can be `self`: the class and its project subclasses in any file, each
reading the first class-body binding along its bases (project/class_dtype_entries.py,
facts/class_dtypes.py). AMP124 holds for the classes whose every region of the file runs in
bfloat16, and says which.

tests/projects/classdtype_d2_amp_trainer is laid out like facebookresearch/detectron2
(detectron2/engine/train_loop.py SimpleTrainer/AMPTrainer, projects/ViTDet, tools/
lazyconfig_train_net.py), in a fork whose AMPTrainer reads its autocast dtype from a class
attribute `precision = torch.float16` and makes an enabled GradScaler, and whose ViTDet project
overrides it with `precision = torch.bfloat16` in `BF16AMPTrainer`, the trainer its entry point
runs with `--bf16`. The twin overrides it with float16.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "classdtype_d2_amp_trainer"
LOOP = "detectron2/engine/train_loop.py"
SUB = "projects/ViTDet/vitdet/bf16_trainer.py"
SCALER = (LOOP, 36, "AMP124")
BF16 = "    precision = torch.bfloat16\n"
FP16 = "    precision = torch.float16\n"


def findings(*edits):
    return code_findings(load(NAME, edits), "AMP124", SETTINGS)


def test_a_subclass_of_another_file_overriding_the_dtype_to_bfloat16_is_reported():
    found, results = findings()
    assert found == [SCALER]
    message = next(d.message for p, r in results.items() for d in r.diagnostics if d.code == "AMP124")
    # each class by path:line (the subclass is the other end, in another file)
    assert "when `self` is BF16AMPTrainer at projects/ViTDet/vitdet/bf16_trainer.py:6 (" in message
    assert "AMPTrainer at detectron2/engine/train_loop.py:29: float16" in message
    # disabling the scaler would break AMPTrainer's float16 run: no fix
    assert not any(d.fix for r in results.values() for d in r.diagnostics if d.code == "AMP124")


def test_the_twin_overriding_it_with_float16_is_silent():
    # (a float16 override reads as float16 for both classes: the scaler is needed)
    assert findings((BF16, FP16))[0] == []


def test_bfloat16_for_every_class_is_the_region_dtype_and_keeps_the_fix():
    found, results = findings((FP16, BF16))
    assert found == [SCALER]
    assert any(d.fix for r in results.values() for d in r.diagnostics if d.code == "AMP124")


def test_an_instance_store_of_the_attribute_gives_no_answer():
    edit = ("        self.log_period = log_period\n",
            "        self.log_period = log_period\n        self.precision = torch.float16\n")
    assert findings(edit)[0] == []


def test_a_store_on_an_object_elsewhere_in_the_project_gives_no_answer():
    edit = ("    trainer.train(0, args.max_iter)\n",
            "    trainer.precision = torch.float16\n    trainer.train(0, args.max_iter)\n")
    assert findings(edit)[0] == []


def test_a_binding_other_than_a_torch_dtype_gives_no_answer():
    assert findings((BF16, "    precision = getattr(torch, 'bfloat16')\n"))[0] == []


def test_a_base_outside_the_project_before_the_binding_gives_no_answer():
    # AMPTrainer binds bfloat16; the subclass binds nothing, and the mixin of another package
    # before AMPTrainer may bind `precision` first
    edits = (BF16 + "\n", ""), (FP16, BF16), (
        "class BF16AMPTrainer(AMPTrainer):", "class BF16AMPTrainer(PrecisionMixin, AMPTrainer):"), (
        "from detectron2.engine.train_loop import AMPTrainer\n",
        "from detectron2.engine.train_loop import AMPTrainer\nfrom fvcore.precision import PrecisionMixin\n")
    assert findings(*edits)[0] == []
    assert findings(*edits[:2])[0] == [SCALER]


def test_a_subclass_that_binds_nothing_reads_its_base():
    # BF16AMPTrainer binds nothing: every class reads AMPTrainer's float16
    assert findings((BF16, ""))[0] == []


def test_editing_the_subclass_file_alone_reaches_the_cached_result(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, SUB, [(BF16, FP16)], "AMP124", [SCALER])
