"""A project GradScaler subclass that overrides `step` for closures (r16b-scalerfp; the
r16-realread note's composer AMP125).

tests/projects/scaler_composer_closure: mosaicml/composer layout (composer/trainer/_scaler.py
`ClosureGradScaler(GradScaler)` whose `step` passes the closure on; composer/trainer/trainer.py
`self.scaler = ClosureGradScaler() if use_closures else GradScaler("cuda")`, and
`self.scaler.step(optimizer, closure=...)` only when closures are used). Main reported AMP125
('Closure use is not currently supported') as if the step were torch's. A scaler text that may
hold an instance of a scaler class not from torch (facts/scalers.py `ScalerInfo.other_class`)
gets no AMP125: that class's `step` may take the closure.
Twin: both arms build torch's GradScaler; reported.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_composer_closure"


def test_the_closure_scaler_subclass_steps_with_a_closure():
    assert code_findings(load(NAME), "AMP125")[0] == []


def test_twin_torchs_scaler_on_both_arms():
    files = load(NAME, (("ClosureGradScaler() if use_closures", 'GradScaler("cuda") if use_closures'),))
    assert code_findings(files, "AMP125")[0] == [("composer/trainer/trainer.py", 19, "AMP125")]
