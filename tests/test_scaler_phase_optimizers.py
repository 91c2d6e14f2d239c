"""Several optimizers, each stepped once per batch through a helper, then one `scaler.update()`
(r16b-scalerfp): GradScaler allows that, yet main reported AMP121 at the helper's call.

tests/projects/scaler_eg3d_phases: NVlabs/eg3d layout (training/training_loop.py loops over
`phases` and calls training/phase_step.py `run_phase(phase, ...)`, which unscales, clips and
steps `phase.opt`), plus training/gan_trainer.py, the same phases as methods of one class
(`for name, module, opt in self.phases: self._step_phase(name, module, opt, batch)`).
A step composed through a call was taken to repeat in every loop of the caller; now a caller's
loop that passes the callee its optimizer (the argument the callee's stepped optimizer was
renamed to) is read like inline code (facts/scaler_paths.py `passed_optimizer`).
Twins, still reported: the loop passes the same phase / the same optimizer each time.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_eg3d_phases"


def findings(files):
    return code_findings(files, "AMP121")[0]


def test_each_phase_steps_its_own_optimizer_then_one_update():
    assert findings(load(NAME)) == []


def test_twin_other_file_helper_steps_the_same_phase_each_time():
    files = load(NAME, (("run_phase(phase, loss_fn", "run_phase(g_phase, loss_fn"),
                        ("    scaler = torch.amp", "    g_phase = phases[0]\n    scaler = torch.amp")))
    assert findings(files) == [("training/training_loop.py", 25, "AMP121")]


def test_twin_method_steps_the_same_optimizer_each_time():
    files = load(NAME, (("self._step_phase(name, module, opt, batch)",
                         "self._step_phase(name, module, self.phases[0][2], batch)"),))
    assert findings(files) == [("training/gan_trainer.py", 26, "AMP121")]
