"""The class flow's evaluations do not grow with the number of questions that reach the same
flow (issue 34), counted, not timed.

A project laid out like fairseq: `fairseq/models/transformer/transformer_decoder.py` builds each
layer as `layer = TransformerDecoderLayer(cfg)` and wraps it again and again
(`layer = checkpoint_wrapper(layer)`, `layer = fsdp_wrap(layer)`, from
`fairseq/modules/checkpoint_activations.py` and `fairseq/distributed/fully_sharded.py`), which
makes a cycle in the flow (the wrapper's parameter is bound from `layer` itself). A value
above a cycle was never memoised, so every call under a region that asked for it walked the
whole flow again: fairseq's 261 questions made 8,973 evaluations of 1,660 values.

Here n training scripts under `examples/` (each its own `main` with `model(x)` under
`torch.autocast`) ask for the same builder's value, with w wrappers in the chain. An extra
script must cost the same few evaluations whatever w; the regions must still reach the layer's
`forward` from every script."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build
from amplint.analysis.project import classvalues

WRAPPERS = '''def checkpoint_wrapper{i}(m, offload_to_cpu=False):
    m.precheckpoint_forward = m.forward
    return m
'''

LAYER = '''import torch
import torch.nn as nn


class TransformerDecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg, cfg)

    def forward(self, x):
        return torch.softmax(self.fc1(x), dim=-1)
'''


def _decoder(wrappers: int) -> str:
    imports = "".join(
        f"from fairseq.modules.checkpoint_activations import checkpoint_wrapper{i}\n" for i in range(wrappers))
    wraps = "".join(f"    layer = checkpoint_wrapper{i}(layer, offload_to_cpu=True)\n" for i in range(wrappers))
    return (
        "from fairseq.modules.transformer_layer import TransformerDecoderLayer\n" + imports + "\n\n"
        "def build_decoder_layer(cfg, no_encoder_attn=False):\n"
        "    layer = TransformerDecoderLayer(cfg)\n" + wraps + "    return layer\n"
    )


TRAIN = '''import torch
from fairseq.models.transformer.transformer_decoder import build_decoder_layer


def main(cfg, x):
    model = build_decoder_layer(cfg)
    with torch.autocast("cuda"):
        return model(x)
'''


def _project(scripts: int, wrappers: int):
    files = {
        "fairseq/modules/transformer_layer.py": LAYER,
        "fairseq/modules/checkpoint_activations.py": "\n\n".join(
            WRAPPERS.format(i=i) for i in range(wrappers)),
        "fairseq/models/transformer/transformer_decoder.py": _decoder(wrappers),
    }
    for i in range(scripts):
        files[f"examples/task{i}/train.py"] = TRAIN
    return build(files, Settings.default())


def _evaluations(monkeypatch, scripts: int, wrappers: int):
    """(values evaluated, the project facts): `_eval` runs once per value not taken from a memo."""
    count = [0]
    real = classvalues.ClassValues._eval

    def counting(self, *args):
        count[0] += 1
        return real(self, *args)

    monkeypatch.setattr(classvalues.ClassValues, "_eval", counting)
    project = _project(scripts, wrappers)
    monkeypatch.setattr(classvalues.ClassValues, "_eval", real)
    return count[0], project


def test_regions_reach_the_wrapped_layer_from_every_script(monkeypatch):
    _, project = _evaluations(monkeypatch, 3, 2)
    entries = project.entries_for("fairseq/modules/transformer_layer.py")
    assert [entry.target for entry in entries] == ["TransformerDecoderLayer.forward"]
    reach = project.region_reach
    assert len(reach) == 3
    for where in reach.values():
        assert where == ["TransformerDecoderLayer.forward in fairseq/modules/transformer_layer.py"]


def test_an_extra_question_costs_the_same_whatever_the_flow_behind_it(monkeypatch):
    cost = {}
    for wrappers in (2, 8):
        for scripts in (2, 6):
            cost[(scripts, wrappers)], _ = _evaluations(monkeypatch, scripts, wrappers)
    per_script_small = (cost[(6, 2)] - cost[(2, 2)]) / 4
    per_script_large = (cost[(6, 8)] - cost[(2, 8)]) / 4
    # each further script evaluates its own values only (3); before, each walked the wrapper
    # chain again (per script: 8 evaluations with 2 wrappers, 20 with 8)
    assert per_script_small == per_script_large, cost
    assert per_script_small <= 4, cost
