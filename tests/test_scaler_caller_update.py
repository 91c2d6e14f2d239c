"""A base class's method steps `self.scaler` and the subclass in another file updates it after
calling that method: the update is the caller's (EntryCallerUpdate, made by the project pass,
scaler_resolution `_caller_updates`), as it is when both classes share one file
(ScalerAnalysis.updated_anywhere). Blind set H's Real-ESRGAN clean twin (a mixin's step, the
model's update) was reported before.

tests/projects/scaler_basicsr_base_model: XPixelGroup/BasicSR layout (basicsr/models/base_model.py
`BaseModel`, basicsr/models/sr_model.py `SRModel(BaseModel).optimize_parameters`,
basicsr/train.py `train_pipeline`) in a fork with `use_amp`: `BaseModel.optimizer_step` steps
through `self.scaler`, `SRModel.optimize_parameters` scales the loss, calls it, then updates.

Twins: the subclass never updates (AMP121 at the base's step); only another class of the
subclass's file updates a `self.scaler` of its own (still reported).
"""

from __future__ import annotations

from project_files import cli_findings, code_findings, load

NAME = "scaler_basicsr_base_model"
BASE = "basicsr/models/base_model.py"
SR = "basicsr/models/sr_model.py"
UPDATE = "        self.scaler.update()\n"
OTHER_CLASS = (
    "\n\nclass EMAScaler:\n"
    "    def __init__(self):\n"
    "        self.scaler = torch.amp.GradScaler(\"cuda\")\n\n"
    "    def end_iter(self):\n"
    "        self.scaler.update()\n"
)


def amp121(files):
    return code_findings(files, "AMP121")


def _moved_update(files):
    path = f"{NAME}/{SR}"
    files[path] = files[path].replace(UPDATE, "") + OTHER_CLASS
    return files


def test_subclass_updates_after_the_inherited_step_is_silent():
    found, _ = amp121(load(NAME))
    assert found == []


def test_twin_subclass_never_updates_is_reported_at_the_base_step():
    found, _ = amp121(load(NAME, ((UPDATE, ""),)))
    assert found == [(BASE, 22, "AMP121")]


def test_twin_update_of_another_class_is_still_reported():
    found, _ = amp121(_moved_update(load(NAME)))
    assert found == [(BASE, 22, "AMP121")]


def test_warm_run_follows_the_callers_edit(tmp_path):
    import os
    import shutil

    from project_files import PROJECTS

    root = tmp_path / NAME
    shutil.copytree(os.path.join(PROJECTS, NAME), root)
    cache = str(tmp_path / "cache")

    def run():
        return cli_findings(root, "--cache-dir", cache, codes=("AMP121",))

    assert run() == [] and run() == []
    caller = root / SR
    text = caller.read_text()
    caller.write_text(text.replace(UPDATE, ""))
    assert run() == [(BASE, 22, "AMP121")]
    caller.write_text(text)
    assert run() == []
