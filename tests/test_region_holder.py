"""A region opened through a HELD opener of another file (project/context_holders.py): the context
an opener makes, bound once (`self.autocast = TorchAutocast(...)`, `ctx = maybe_autocast(...)`)
and entered later as `with self.autocast:` / `with ctx:`; the opener's `enabled` gate and the
`dtype=`/`device_type=` it passes on through `**kwargs` come from the call.

tests/projects/holder_audiocraft is laid out like facebookresearch/audiocraft
(audiocraft/utils/autocast.py TorchAutocast(enabled, *args, **kwargs) wrapping torch.autocast,
audiocraft/solvers/{base,compression}.py StandardSolver / CompressionSolver.build_model and
run_step, audiocraft/models/encodec.py, audiocraft/adversarial/losses.py, train.py). The region
reaches the adversarial loss's `F.binary_cross_entropy` on probabilities (AMP102); a backward
moved inside the `with` is AMP104 in compression.py; with `dtype=torch.bfloat16` an unconditional
GradScaler is AMP124.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "holder_audiocraft"
AMP102 = ("audiocraft/adversarial/losses.py", 7, "AMP102")
STORE = "        self.autocast = TorchAutocast(enabled=self.cfg.autocast, device_type=self.device, dtype=torch.float16)\n"
WITH = "        with self.autocast:\n"
BACKWARD_INSIDE = ("        self.optimizer.zero_grad()\n        self.scaler.scale(loss).backward()\n",
                   "            self.scaler.scale(loss).backward()\n        self.optimizer.zero_grad()\n")
AMP104 = ("audiocraft/solvers/compression.py", 25, "AMP104")
BF16 = ((STORE, STORE.replace("torch.float16", "torch.bfloat16")),
        ('GradScaler("cuda", enabled=self.cfg.autocast)', 'GradScaler("cuda")'))
AMP124 = ("audiocraft/solvers/compression.py", 16, "AMP124")
LOCAL = ((STORE, ""), ("        x = batch.to(self.device)\n",
                       "        x = batch.to(self.device)\n"
                       "        ctx = TorchAutocast(self.cfg.autocast, device_type=\"cuda\")\n"),
         (WITH, "        with ctx:\n"))


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def test_the_region_reaches_the_loss_of_another_file():
    found, results = findings("AMP102")
    assert found == [AMP102]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP102"]
    assert "under `with self.autocast:` at solvers/compression.py:20, self.autocast <- TorchAutocast(...) at " \
           "solvers/compression.py:15 (`TorchAutocast()` of utils/autocast.py:4 enters the autocast at " \
           "utils/autocast.py:8 on some paths)" in message


def test_the_calling_file_sees_the_region_itself():
    assert findings("AMP104", BACKWARD_INSIDE)[0] == [AMP104]


def test_the_dtype_passed_on_through_kwargs_comes_from_the_call():
    assert findings("AMP124", *BF16)[0] == [AMP124]
    assert findings("AMP124", BF16[1])[0] == []  # float16: the scaler is needed
    # a dtype the call does not write as a literal: unknown
    assert findings("AMP124", BF16[0], BF16[1], ("dtype=torch.bfloat16)", "dtype=self.cfg.dtype)"))[0] == []


def test_a_local_holder():
    assert findings("AMP102", *LOCAL)[0] == [AMP102]
    assert findings("AMP104", *LOCAL, BACKWARD_INSIDE)[0] == [AMP104]  # one line less, one more


def test_a_held_contextmanager_function():
    edits = (("from audiocraft.utils.autocast import TorchAutocast\n",
              "from audiocraft.utils.autocast import maybe_autocast\n"),
             (STORE, "        self.autocast = maybe_autocast(self.cfg.autocast)\n"))
    opener = ("\n\nimport contextlib\n\n\n@contextlib.contextmanager\ndef maybe_autocast(enabled):\n"
              "    with torch.autocast(\"cuda\", dtype=torch.float16, enabled=enabled):\n        yield\n")
    files = load(NAME, edits)
    files[f"{NAME}/audiocraft/utils/autocast.py"] += opener
    from project_files import project_findings
    from amplint.analysis.project import lint_project

    found = [f for f in project_findings(lint_project(files, SETTINGS)) if f[2] == "AMP102"]
    assert found == [AMP102]
    # a literal False for its `enabled` parameter: no region
    files[f"{NAME}/audiocraft/solvers/compression.py"] = files[f"{NAME}/audiocraft/solvers/compression.py"].replace(
        "maybe_autocast(self.cfg.autocast)", "maybe_autocast(False)")
    assert [f for f in project_findings(lint_project(files, SETTINGS)) if f[2] == "AMP102"] == []


def test_twin_with_the_logits_form_is_silent():
    assert findings("AMP102", ("return F.binary_cross_entropy(probs, torch.ones_like(probs))",
                               "return F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))"))[0] == []


@pytest.mark.parametrize("edits", [
    # the gate passed a literal False: TorchAutocast holds no autocast
    ((STORE, STORE.replace("enabled=self.cfg.autocast", "enabled=False")),),
    # the attribute stored again elsewhere in the file: which value the `with` enters is not known
    ((WITH, "        if not self.cfg.autocast:\n            self.autocast = contextlib.nullcontext()\n" + WITH),
     ("import torch\n", "import contextlib\n\nimport torch\n")),
    # a class of the calling file of that name
    (("from audiocraft.utils.autocast import TorchAutocast\n",
      "import contextlib\n\n\nclass TorchAutocast(contextlib.nullcontext):\n    pass\n"),),
    # the local holder bound again, or a parameter
    LOCAL + (("        with ctx:\n", "        if idx % 2:\n            ctx = contextlib.nullcontext()\n        with ctx:\n"),
             ("import torch\n", "import contextlib\n\nimport torch\n")),
    LOCAL[:2] + ((WITH, "        with batch:\n"),),
])
def test_clean_twins_stay_silent(edits):
    assert findings("AMP102", *edits)[0] == []
