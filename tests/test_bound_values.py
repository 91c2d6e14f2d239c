"""One value flow for numbers, devices and half-cast models (facts/bound_values.py,
project/bound_flow.py, project/pointsto_atoms.py): the points-to resolver carries them through
every binding construct it models, and AMP103, AMP110, AMP131 and AMP140 read the one answer.

tests/projects/bound_lavis_runner: salesforce/LAVIS layout (lavis/common/dist_utils.py's
`get_device`, lavis/common/config.py's run config, lavis/models/blip_head.py's ITM head,
lavis/runners/runner_base.py's RunnerBase.train_step, train.py), each hazard crossing files:
- AMP131: `get_device()` (dist_utils.py) returns a `torch.device`; train.py passes it as
  `device=` to RunnerBase, which keeps it as `self.device` and opens
  `torch.autocast(device_type=self.device)`: ValueError "Expected `device_type` of type `str`";
- AMP110 / AMP140: RunConfig's defaults `mask_value=-1e9` and `norm_eps=1e-10` reach
  `masked_fill(mask, self.cfg.mask_value)` and `+ self.cfg.norm_eps` in ITMHead.forward through the
  config object the head keeps: under float16 autocast the fill overflows float16 (RuntimeError)
  and 1e-10 rounds to 0 (checked under torch below);
- AMP103: `Exporter.fp16` stores and returns `self.head.half()`; train.py's `finetune_fp16` runs
  the returned head under its autocast region.
The clean twin passes the device's type, keeps numbers float16 holds and trains the fp32 head.
"""

from __future__ import annotations

import pytest

from project_files import code_findings, load
from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.project import lint_project

NAME = "bound_lavis_runner"
TWIN = (
    ("norm_eps=1e-10", "norm_eps=1e-6"),
    ("mask_value=-1e9", "mask_value=-1e4"),
    ("device=get_device())", "device=get_device().type)"),
    ("head = Exporter(ITMHead(cfg)).fp16()", "head = Exporter(ITMHead(cfg)).head"),
)
SETTINGS = Settings.default()


def _all(replace=()):
    results = lint_project(load(NAME, replace), SETTINGS)
    return sorted((path.split("/", 1)[1], d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics), results


def test_each_value_crosses_files_to_its_rule():
    found, results = _all()
    assert found == [
        ("lavis/models/blip_head.py", 14, "AMP110"),
        ("lavis/models/blip_head.py", 16, "AMP140"),
        ("lavis/models/blip_head.py", 24, "AMP103"),
        ("lavis/runners/runner_base.py", 14, "AMP131"),
    ]
    messages = {d.code: d.message for r in results.values() for d in r.diagnostics}
    assert "made at lavis/common/dist_utils.py:6 and lavis/common/dist_utils.py:7" in messages["AMP131"]
    assert "reaches `head` at train.py:25, read under the autocast region at train.py:24" in messages["AMP103"]
    assert "eps 1e-10" in messages["AMP140"]


def test_clean_twin_is_silent():
    assert _all(TWIN)[0] == []


def test_the_device_passed_positionally():
    found = code_findings(load(NAME, ((", cfg, device=get_device())", ", cfg, get_device())"),)), "AMP131")[0]
    assert found == [("lavis/runners/runner_base.py", 14, "AMP131")]


def test_a_second_config_that_disagrees_leaves_the_number_unknown():
    other = "    model = ITMHead(cfg)\n"
    found = _all(((other, other + "    probe = ITMHead(RunConfig(norm_eps=1e-5, mask_value=-3e4))\n"),))[0]
    assert [f for f in found if f[2] in ("AMP110", "AMP140")] == []


def test_a_cast_back_to_float_drops_the_half_model():
    found = code_findings(load(NAME, (("Exporter(ITMHead(cfg)).fp16()", "Exporter(ITMHead(cfg)).fp16().float()"),)),
                          "AMP103")[0]
    assert found == []


@pytest.mark.parametrize("between, found", [
    ("    head.float()\n", False),  # a module's `.float()` casts it in place
    ("    head = head.float()\n", False),
    ("    if cfg.fp32_head:\n        head.float()\n", True),  # may not run
    ("    head.float()\n    head = Exporter(ITMHead(cfg)).fp16()\n", True),  # bound again after it
])
def test_a_cast_back_in_place_before_the_region(between, found):
    """The solve is flow-insensitive: `head.float()` as a statement between the call returning the
    cast model and the region that reads it is checked on the reading function's statements."""
    replace = (("    optimizer = torch.optim.SGD(head.parameters(), lr=cfg.lr)\n",
                between + "    optimizer = torch.optim.SGD(head.parameters(), lr=cfg.lr)\n"),)
    assert bool(code_findings(load(NAME, replace), "AMP103")[0]) is found


def _one(source):
    """A one-file project (the project pass solves it when it opens a region)."""
    results = lint_project({"probe/probe.py": source}, SETTINGS)
    return sorted((d.line, d.code) for r in results.values() for d in r.diagnostics)


RUNNER = '''import torch


class Runner:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def step(self, batch):
        with torch.autocast(device_type=self.device, dtype=torch.bfloat16):
            return self.model(batch).mean()


def main(model, loader):
    runner = Runner(model, DEVICE)
    for batch in loader:
        runner.step(batch).backward()
'''


@pytest.mark.parametrize("device, found", [
    ('torch.device("cuda")', [(10, "AMP131")]),
    ('torch.device("cuda").type', []),
    ('"cuda"', []),
])
def test_one_file_a_device_stored_on_the_instance(device, found):
    assert _one(RUNNER.replace("DEVICE", device)) == found


def test_one_file_a_device_rebound_to_its_type_is_not_one():
    source = '''import torch


def run_epoch(model, loader, device):
    if isinstance(device, torch.device):
        device = device.type
    for x in loader:
        with torch.autocast(device, dtype=torch.float16):
            loss = model(x).mean()
        loss.backward()


def main(model, loader):
    run_epoch(model, loader, torch.device("cuda"))
'''
    assert _one(source) == []


NORM = '''import torch
import torch.nn as nn


class Norm(nn.Module):
    def __init__(self, dim, eps=1e-12):
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.w * x / (x.abs().amax(-1, keepdim=True) + self.eps)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm(64, PASSED)

    def forward(self, x):
        return self.norm(x)


def main(x):
    return Net().half()(x.half())
'''


@pytest.mark.parametrize("passed, found", [
    ("eps=1e-5", []),  # the default is never used: on main, an AMP140 for 1e-12
    ("eps=1e-10", [(12, "AMP140")]),
    ("1e-10", [(12, "AMP140")]),
])
def test_one_file_what_the_construction_passes_decides_the_eps(passed, found):
    assert [f for f in _one(NORM.replace("PASSED", passed)) if f[1] == "AMP140"] == found


HALF = '''import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x)


class TTS:
    def __init__(self):
        vits = Generator()
        self.vits_model = vits.half()


def main(batches):
    tts = TTS()
    net_g = tts.vits_model AFTER
    opt = torch.optim.AdamW(net_g.parameters(), 1e-4)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = net_g(x).float().mean()
        loss.backward()
        opt.step()
'''


@pytest.mark.parametrize("after, found", [("", [(17, "AMP103")]), (".float()", [])])
def test_one_file_a_half_model_stored_on_an_instance(after, found):
    assert [f for f in _one(HALF.replace(" AFTER", after)) if f[1] == "AMP103"] == found


def test_premises_under_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="device_type"):
        torch.autocast(device_type=torch.device("cpu"), dtype=torch.bfloat16)
    assert float(torch.tensor(1e-10, dtype=torch.float16)) == 0.0
    scores = torch.randn(2, 2).half()
    with pytest.raises(RuntimeError, match="overflow"):
        scores.masked_fill(torch.ones(2, 2, dtype=torch.bool), -1e9)

