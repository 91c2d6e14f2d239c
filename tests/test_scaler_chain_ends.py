"""A GradScaler finding composed through two calls names the far end of its chain (issue 26).

tests/projects/scaler_moco_epoch_update is laid out like facebookresearch/moco-v3 (main_moco.py
main_worker / train, moco/optimizer.py LARS) in a fork that steps through a `lars_step` helper
of moco/optimizer.py: `train` scales and calls the helper per batch, `main_worker` updates the
scaler once per epoch. The finding sits at `main_worker`'s call of `train`, two calls from the
`scaler.step` it is about: it must cite moco/optimizer.py:16 (the step), not line 21 of
main_moco.py (the first hop). The twin updates per
step in the helper and stays silent.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

SETTINGS = Settings.default()
NAME = "scaler_moco_epoch_update"
UPDATE_PER_STEP = (
    ("    scaler.step(optimizer)\n", "    scaler.step(optimizer)\n    scaler.update()\n"),
    ("        train(train_loader, model, optimizer, scaler, epoch, args)\n        scaler.update()\n",
     "        train(train_loader, model, optimizer, scaler, epoch, args)\n"),
)


def _findings(files):
    return [(path, d) for path, result in lint_project(files, SETTINGS).items()
            for d in result.diagnostics if d.code.startswith("AMP12")]


def test_a_step_two_calls_away_is_cited_in_its_own_file():
    found = _findings(load(NAME))
    assert [(path, d.line, d.code) for path, d in found] == [(f"{NAME}/main_moco.py", 28, "AMP121")]
    diag = found[0][1]
    assert diag.message.startswith(
        "`scaler.step(...)` (moco/optimizer.py:16, through the call at line 28) runs every iteration")


def test_the_twin_updating_in_the_helper_is_silent():
    files = load(NAME, UPDATE_PER_STEP)
    assert "scaler.update()" in files[f"{NAME}/moco/optimizer.py"]
    assert _findings(files) == []
