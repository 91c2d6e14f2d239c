"""A half model whose GradScaler steps an optimizer that takes AMP's scaling over itself: its
class, in another file, sets `_step_supports_amp_scaling = True`, so `GradScaler.step` never
calls `unscale_` on it, and the optimizer keeps the weights (found reading real trees,
r17-realread: AMP103 in NVIDIA/DeepLearningExamples BERT lamb_amp_opt/main.py, `model.half()`
with autocast and `grad_scaler.step(FusedLAMBAMP)`, the class in fused_lamb/fused_lamb.py
re-exported by its package).

tests/projects/scaling_optimizer_dle_lamb: DeepLearningExamples BERT lamb_amp_opt layout.
amplint/analysis/project/amp_scaling_classes.py (delivered as EntryScalingOptimizer),
amplint/analysis/facts/amp_scaling.py, read by AMP103. Twins, reported: another store turning
the attribute off, a plain torch optimizer, an explicit `unscale_`, a second optimizer stepped
beside it that does not take the scaling over.
"""

from __future__ import annotations

from project_files import code_findings, load

LAMB = "scaling_optimizer_dle_lamb"
MAIN = "lamb_amp_opt/main.py"
CAST = [(MAIN, 17, "AMP103")]


def amp103(*edits):
    return code_findings(load(LAMB, edits), "AMP103")[0]


def test_an_optimizer_class_taking_the_scaling_over_in_another_file_is_silent():
    assert amp103() == []


def test_twin_another_store_turning_it_off_is_reported():
    edit = ("                p.copy_(master)\n",
            "                p.copy_(master)\n\n\nclass PlainLAMB(FusedLAMBAMP):\n"
            "    def __init__(self, params):\n        super().__init__(params)\n"
            "        self._step_supports_amp_scaling = False\n")
    assert amp103(edit) == CAST


def test_twin_a_plain_torch_optimizer_is_reported():
    assert amp103(("optimizer = FusedLAMBAMP(model.parameters())",
                   "optimizer = torch.optim.AdamW(model.parameters())")) == CAST


def test_twin_an_explicit_unscale_is_reported():
    assert amp103(("        grad_scaler.step(optimizer)\n",
                   "        grad_scaler.unscale_(optimizer)\n        grad_scaler.step(optimizer)\n")) == CAST


def test_twin_a_second_plain_optimizer_stepped_beside_it_is_reported():
    edit = ("        grad_scaler.step(optimizer)\n",
            "        grad_scaler.step(optimizer)\n        grad_scaler.step(extra)\n")
    bind = ("    grad_scaler = torch.amp.GradScaler(\"cuda\")\n",
            "    grad_scaler = torch.amp.GradScaler(\"cuda\")\n    extra = torch.optim.SGD(model.parameters(), lr=0.1)\n")
    assert amp103(edit, bind) == CAST


def test_the_premise_under_torch_half_model_steps_through_the_scaling_optimizer(monkeypatch):
    """torch (2.13 CPU): a `.half()` model whose GradScaler steps FusedLAMBAMP trains (fp32
    masters); the same model with AdamW raises 'Attempting to unscale FP16 gradients.'"""
    import os
    import sys

    import pytest

    torch = pytest.importorskip("torch")
    from project_files import PROJECTS

    monkeypatch.syspath_prepend(os.path.join(PROJECTS, LAMB, "lamb_amp_opt"))
    sys.modules.pop("fused_lamb", None)
    sys.modules.pop("fused_lamb.fused_lamb", None)
    from fused_lamb import FusedLAMBAMP

    def train(make):
        model = torch.nn.Linear(16, 4).half()
        optimizer, scaler = make(model.parameters()), torch.amp.GradScaler("cpu")
        for _ in range(2):
            with torch.autocast("cpu", dtype=torch.float16):
                loss = torch.nn.functional.cross_entropy(model(torch.randn(8, 16).half()), torch.randint(0, 4, (8,)))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        return optimizer

    assert train(FusedLAMBAMP).masters[0][0].dtype == torch.float32
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        train(torch.optim.AdamW)
