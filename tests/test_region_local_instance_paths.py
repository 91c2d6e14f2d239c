"""Methods and forwards of an instance held in a local, reached from a region of the same file,
are read along the region's call (facts/dtype_paths.py; README "Call paths"),
in a file where nothing else is bound at call sites: on main such a file was read once, the
method's parameters unknown and its code only maybe under the region, so nothing was reported.

tests/projects/asl_local_head: Alibaba-MIIL/ASL layout (train.py's train_multi_label_coco,
src/models' create_model), in a fork whose multi-label head lives in train.py as a local
`head = MultiLabelHead(...)` whose `loss` method is called under the float16 autocast: the
sigmoid of its Linear is float16 there, `clamp(min=1e-8)` clamps to 0 (1e-8 rounds to 0 in
float16) and the log is -inf (AMP140).
tests/projects/dino_local_selector: IDEA-Research/DINO layout (main.py, engine.py's
train_one_epoch), in a fork whose two-stage query selector is built as a local in
train_one_epoch and called under the float16 autocast: its `forward` fills the float16 class
scores with `torch.finfo(proposals.dtype).min` of float32 proposals (AMP111, overflow), and the
helper it calls, `scatter_scores`, writes the float16 scores into a `torch.zeros` float32 buffer
through a mask (AMP101, index_put dtype mismatch).
Both checked under torch 2.13 below (CPU float16 autocast). Clean twins: the dtype taken from
the filled / written value, a bfloat16 region for the eps, a region that may be off, a float32
cast in the method, the instance a parameter (its class unknown: no guess).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
import torch

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.rules.amp140_eps_underflow import EpsUnderflow
from project_files import PROJECTS, code_findings, load

ASL, DINO = "asl_local_head", "dino_local_selector"
REGION = 'with torch.autocast("cuda", dtype=torch.float16):'


def _found(name, code, replace=()):
    return code_findings(load(name, replace), code)[0]


def _message(name, path, code):
    _, results = code_findings(load(name), code)
    return [d.message for d in results[f"{name}/{path}"].diagnostics if d.code == code]


def test_a_method_of_a_local_instance_is_read_along_the_region_s_call():
    assert _found(ASL, "AMP140") == [("train.py", 15, "AMP140"), ("train.py", 16, "AMP140")]
    for message in _message(ASL, "train.py", "AMP140"):
        assert "autocast region at line 26, called at line 27" in message


@pytest.mark.parametrize("replace", [
    ((REGION, 'with torch.autocast("cuda", dtype=torch.bfloat16):'),),  # bfloat16 holds 1e-8
    ((REGION, 'with torch.autocast("cuda", dtype=torch.float16, enabled=amp):'),
     ("lr=1e-4):", "lr=1e-4, amp=False):")),  # may be off
    (("torch.sigmoid(self.fc(features))", "torch.sigmoid(self.fc(features).float())"),),
    (("def train_multi_label_coco(loader,", "def train_multi_label_coco(loader, head,"),
     ("    head = MultiLabelHead(model.num_features, num_classes)\n", "")),  # class unknown
])
def test_asl_clean_twins(replace):
    assert _found(ASL, "AMP140", replace) == []


def test_a_forward_of_a_local_instance_and_its_helper_are_read_along_the_region_s_call():
    assert _found(DINO, "AMP111") == [("engine.py", 20, "AMP111")]
    assert _found(DINO, "AMP101") == [("engine.py", 6, "AMP101")]
    [message] = _message(DINO, "engine.py", "AMP111")
    assert "called at line 28 under the autocast region at line 27" in message


def test_dino_clean_twins():
    fill = (("torch.finfo(proposals.dtype)", "torch.finfo(scores.dtype)"),)
    assert _found(DINO, "AMP111", fill) == []
    zeros = (("values.shape[-1], device=values.device)",
              "values.shape[-1], dtype=values.dtype, device=values.device)"),)
    assert _found(DINO, "AMP101", zeros) == []
    maybe = ((REGION, 'with torch.autocast("cuda", dtype=torch.float16, enabled=amp):'),
             ("optimizer):", "optimizer, amp=False):"))
    assert _found(DINO, "AMP111", maybe) == [] and _found(DINO, "AMP101", maybe) == []


def test_amp140_examples_read_along_the_region_s_call_cite_it():
    # the rule's own must-flag examples: the network (or the pixel norm) also called outside
    # the region reports on the region's path, citing the call and the region
    cited = [case.code for case in EpsUnderflow.flag if "def evaluate" in case.code
             or "def style" in case.code]
    assert len(cited) == 2
    for source in cited:
        [found] = lint_source("example.py", source, Settings(frozenset({"AMP140"}))).diagnostics
        assert ", called at line " in found.message


def _load(name, module):
    path = os.path.join(PROJECTS, name, f"{module}.py")
    sys.path.insert(0, os.path.join(PROJECTS, name))
    try:
        spec = importlib.util.spec_from_file_location(f"{name}_{module}", path)
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return loaded
    finally:
        sys.path.remove(os.path.join(PROJECTS, name))


def test_torch_asl_head_loss_is_inf_under_float16_autocast():
    head = _load(ASL, "train").MultiLabelHead(4, 3)
    with torch.no_grad():
        head.fc.weight.zero_()
        head.fc.bias.copy_(torch.tensor([-20.0, 20.0, 0.0]))
    features, y = torch.randn(2, 4), torch.tensor([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    with torch.autocast("cpu", dtype=torch.float16):
        assert head.fc(features).dtype == torch.float16
        assert torch.isinf(head.loss(features, y))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.isfinite(head.loss(features, y))
    assert torch.isfinite(head.loss(features, y))


def test_torch_dino_selector_raises_under_float16_autocast():
    engine = _load(DINO, "engine")
    selector = engine.EncoderQuerySelector(8, 5)
    memory, keep = torch.randn(2, 50, 8), torch.rand(2, 50) > 0.5
    with torch.autocast("cpu", dtype=torch.float16):
        with pytest.raises(RuntimeError, match="c10::Half without overflow"):
            selector(memory, keep)
        scores = selector.enc_out_class_embed(memory)
        with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
            engine.scatter_scores(scores[keep], keep)
    assert selector(memory, keep).dtype == torch.float32
