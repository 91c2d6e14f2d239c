"""AMP124 where the bf16 region is entered through a held opener class of another file and the
scaler exists only when the region is enabled.

tests/projects/scaler_speechbrain_bf16_holder is laid out like speechbrain/speechbrain
(speechbrain/core.py `Brain.__init__`/`fit_batch`, speechbrain/utils/autocast.py `TorchAutocast`,
a recipe's train.py) in a fork that trains in bfloat16: `Brain.__init__` stores
`self.amp_dtype = torch.bfloat16`, then `self.training_ctx = TorchAutocast(self.use_amp,
device_type="cuda", dtype=self.amp_dtype)` (its `**kwargs` go on to `torch.autocast`), and
creates the GradScaler only `if self.use_amp:`, the flag the region is enabled by. Two steps:
the dtype `self.amp_dtype` stored just before the call (facts/stored_dtypes.py), and a scaler
that is `None` except under the region's own flag (AMP124 `_guarded_by_region_flag`). Twins: the
scaler gated on the dtype too; the attribute stored again elsewhere in the file (its dtype at the
call is then not known); a scaler under another flag.
"""

from __future__ import annotations

import os

import pytest

from project_files import PROJECTS, code_findings, load

NAME = "scaler_speechbrain_bf16_holder"
CORE = f"{NAME}/speechbrain/core.py"


def test_the_scaler_under_the_bf16_regions_flag_is_reported():
    found, results = code_findings(load(NAME), "AMP124")
    assert found == [("speechbrain/core.py", 17, "AMP124")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP124"]
    assert diag.message.startswith(
        "GradScaler created only when the autocast regions are enabled (`if self.use_amp:`), and every "
        "autocast region of this file runs in bfloat16 (line 14)")


@pytest.mark.parametrize("edit", [
    # the scaler gated on the dtype as well
    ("        if self.use_amp:\n", "        if self.use_amp and self.amp_dtype == torch.float16:\n"),
    # another flag: the scaler may exist while the region is off
    ("        if self.use_amp:\n", "        if run_opts.get(\"grad_scaler\"):\n"),
    # the dtype attribute bound again in the file: not known at the call
    ("    def compute_forward(self, batch):\n",
     "    def use_fp16(self):\n        self.amp_dtype = torch.float16\n\n    def compute_forward(self, batch):\n"),
    # the dtype stored after the opener is built
    ("        self.amp_dtype = torch.bfloat16\n        self.training_ctx = TorchAutocast("
     "self.use_amp, device_type=\"cuda\", dtype=self.amp_dtype)\n",
     "        self.training_ctx = TorchAutocast(self.use_amp, device_type=\"cuda\", dtype=self.amp_dtype)\n"
     "        self.amp_dtype = torch.bfloat16\n"),
])
def test_twins_are_silent(edit):
    files = load(NAME, (edit,))
    assert edit[1] in files[CORE]
    assert code_findings(files, "AMP124")[0] == []


def test_the_held_opener_runs_its_region_in_the_dtype_the_call_forwards():
    # the project's own TorchAutocast, entered on CPU with the dtype passed through **kwargs
    torch = pytest.importorskip("torch")
    scope: dict = {}
    with open(os.path.join(PROJECTS, NAME, "speechbrain", "utils", "autocast.py")) as handle:
        exec(compile(handle.read(), "autocast.py", "exec"), scope)
    amp_dtype = torch.bfloat16
    layer = torch.nn.Linear(4, 4)
    with scope["TorchAutocast"](True, device_type="cpu", dtype=amp_dtype):
        assert layer(torch.randn(2, 4)).dtype == torch.bfloat16
    with scope["TorchAutocast"](False, device_type="cpu", dtype=amp_dtype):
        assert layer(torch.randn(2, 4)).dtype == torch.float32
