"""A tensor's dtype carried into a parameter from every call of the function (issue 26; RULES.md
"Dtype of values"): a public function or method no other project file mentions has all its calls
in its file (project/local_callers.py -> facts/local_callers.py), so the dtype fact binds its
parameters as it binds a private name's (facts/dtype_params.py), and every rule reading the fact
sees them: AMP101 (a float32 factory a known half value is written into, outside fp16 code),
AMP141 / AMP140 (float16 exponentials, sums, eps), AMP110 (a fill float16 cannot hold), and the
escape walk's AMP105 (a parameter every call binds to an escaped half value,
facts/escape_params.py).

tests/projects/paramflow_bevdepth is shaped like megvii-research/BEVDepth: the detector computes
its history BEV features under a float16 autocast region in one method and hands them, by
keyword, to the method that fuses them through a float32 Linear (AMP105); the experiment script
casts the depth logits to float16 and passes them to plain helpers of its own file that paste
them into a `torch.zeros` canvas (AMP101), take a hand-written log-sum-exp (AMP141) and mask
with -1e9 (AMP110). Set M's misses: BEVFormer d, Grounded-SAM b/c (one-file probes, no project
pass: the lone file's entry) and the fish-speech helper shape. Every hazard is run on CPU below
(torch 2.13: float16 tensors, bfloat16 autocast for the region)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from amplint.analysis.engine import Settings
from project_files import PROJECTS, cli_findings, load, project_findings

NAME = "paramflow_bevdepth"
TRAIN = "bevdepth/exps/train.py"
MODEL = "bevdepth/models/bev_depth.py"
FINDINGS = [
    (TRAIN, 7, "AMP101"), (TRAIN, 13, "AMP141"), (TRAIN, 17, "AMP110"), (MODEL, 18, "AMP105"),
]
HALF = ("    depth_logits = model.head(bev_feats).half()\n", "    depth_logits = model.head(bev_feats)\n")


def findings(files):
    from amplint.analysis.project import lint_project

    results = lint_project(files, Settings.default())
    return [f for f in project_findings(results) if f[2] in ("AMP101", "AMP105", "AMP110", "AMP140", "AMP141")]


def test_values_bound_from_every_call_reach_each_rule_that_reads_dtypes():
    assert findings(load(NAME)) == FINDINGS


def test_the_messages_name_the_known_dtype_and_the_region():
    from amplint.analysis.project import lint_project

    results = lint_project(load(NAME), Settings.default())
    messages = {d.code: d.message for r in results.values() for d in r.diagnostics}
    assert "line 8 writes `depth[valid]` (float16) into it: that raises 'Index put requires" in messages["AMP101"]
    assert "`history` is float16 from the autocast region at line 13 (produced at line 14)" in messages["AMP105"]


def test_float32_logits_are_silent():
    assert findings(load(NAME, (HALF,))) == [(MODEL, 18, "AMP105")]


def test_history_cast_back_in_the_region_is_silent():
    cast = ("        return history_feats\n", "        return history_feats.float()\n")
    assert findings(load(NAME, (cast,))) == FINDINGS[:3]


def test_a_positional_call_binds_the_same():
    positional = ("self.fuse_history(bev_feats, history=history)", "self.fuse_history(bev_feats, history)")
    assert findings(load(NAME, (positional,))) == FINDINGS


def test_a_second_caller_passing_float32_makes_no_fact():
    second = ("    print(model(history_imgs, bev_feats).shape)\n",
              "    print(model(history_imgs, bev_feats).shape, paste_depth(bev_feats, valid, 4))\n")
    assert findings(load(NAME, (second,))) == [f for f in FINDINGS if f[2] != "AMP101"]


def test_a_second_method_call_passing_float32_makes_no_fact():
    second = ("    def forward(self, history_imgs, bev_feats):\n",
              "    def refine(self, bev_feats):\n"
              "        return self.fuse_history(bev_feats, bev_feats)\n\n"
              "    def forward(self, history_imgs, bev_feats):\n")
    assert findings(load(NAME, (second,))) == FINDINGS[:3]


def test_a_call_leaving_a_none_default_makes_no_fact():
    default = (("def depth_logprob(depth_logits):", "def depth_logprob(depth_logits=None):"),
               ("    print(evaluate(", "    print(depth_logprob())\n    print(evaluate("))
    assert findings(load(NAME, default)) == [f for f in FINDINGS if f[2] != "AMP141"]


def test_a_name_another_file_mentions_is_not_bound():
    files = load(NAME)
    files[f"{NAME}/tools/visualize.py"] = "from bevdepth.exps.train import depth_logprob\n"
    files[f"{NAME}/configs/fusion.yaml"] = "fusion: fuse_history\n"
    assert findings(files) == [f for f in FINDINGS if f[2] not in ("AMP141", "AMP105")]


def test_the_entry_names_only_public_defs_called_in_their_file_and_nowhere_else():
    from amplint.analysis.facts.local_callers import EntryCalledHere
    from amplint.analysis.project.local_callers import local_caller_entries

    class Project:
        files = {
            "a.py": "import torch\ndef paste(x):\n    return x.half()\ndef unused(x):\n    return x\n"
                    "def _private(x):\n    return x\nclass M:\n    def expand(self, x):\n        return x\n"
                    "    def run(self, x):\n        return self.expand(paste(_private(x)))\n",
            "b.py": "# paste() is what the demo calls\n",
            "c.py": "def expand_all(x):\n    return x\n",
        }

    found = local_caller_entries(Project, sorted(Project.files))
    # `paste`: b.py's comment mentions it; `unused`: never called; `_private`: private anyway;
    # `expand_all` of c.py is another word
    assert found == {"a.py": (EntryCalledHere(frozenset({"expand"})),)}


# -- one file, no project pass: set M's one-file reductions ------------------------------------
BEVFORMER_D = '''import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.history_compress = nn.Linear(16, 8)
        self.history_expand = nn.Linear(8, 16)

    def obtain_history_bev(self, xs):
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            prev_bev = self.history_compress(xs)
        return prev_bev

    def expand(self, prev_bev):
        return self.history_expand(prev_bev)

    def forward_train(self, xs, x):
        prev_bev = self.obtain_history_bev(xs)
        return self.expand(prev_bev)
'''
GROUNDED_SAM_C = '''import torch
import torch.nn as nn


class Sam(nn.Module):
    def __init__(self, embed_dim=16):
        super().__init__()
        self.hyper = nn.Linear(4, 16)

    def forward(self, boxes):
        return self.hyper(boxes)


def paste(low_res_masks, keep, num_boxes):
    canvas = torch.zeros((num_boxes, 16), device=low_res_masks.device)
    canvas[keep] = low_res_masks[keep]
    return canvas


def main():
    sam = Sam().to("cuda").half()
    low_res_masks = sam(torch.rand(3, 4, device="cuda").half())
    keep = torch.tensor([True, False, True], device="cuda")
    print(paste(low_res_masks, keep, 3).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (BEVFORMER_D, [("probe.py", 17, "AMP105")]),
    (GROUNDED_SAM_C, [("probe.py", 15, "AMP101")]),
])
def test_the_lone_file_of_a_run_binds_its_public_names(tmp_path, source, expected):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "probe.py").write_text(source)
    assert cli_findings(tmp_path, "--no-cache", codes=("AMP101", "AMP105")) == expected
    # each file on its own (no project): other files may call the names
    assert cli_findings(tmp_path, "--no-cache", "--isolated-files", codes=("AMP101", "AMP105")) == []
    # a second Python file of the project that calls it with float32: no fact
    callee = "paste(" if "def paste" in source else "Detector().expand("
    (tmp_path / "other.py").write_text(f"import torch\nfrom probe import *\n{callee}torch.zeros(3, 8), torch.tensor([True] * 3), 3)\n")
    assert cli_findings(tmp_path, "--no-cache", codes=("AMP101", "AMP105")) == []


# -- the hazards, run (torch 2.13 CPU) ---------------------------------------------------------
torch = pytest.importorskip("torch")


@pytest.mark.torch
def test_each_hazard_happens_when_the_project_runs(tmp_path):
    root = tmp_path / NAME
    shutil.copytree(os.path.join(PROJECTS, NAME), root)
    model_file = root / MODEL
    # CPU autocast runs bfloat16 (float16 on CUDA): the region's output escapes the same way
    model_file.write_text(model_file.read_text().replace(
        'torch.autocast("cuda", dtype=torch.float16)', 'torch.autocast("cpu", dtype=torch.bfloat16)'))
    sys.path.insert(0, str(root))
    try:
        from bevdepth.exps import train
        from bevdepth.models.bev_depth import BEVDepth

        torch.manual_seed(0)
        model = BEVDepth()
        imgs, feats = torch.randn(4, 32), torch.randn(4, 16)
        valid = torch.tensor([True, False, True, True])
        with pytest.raises(RuntimeError, match="mat1 and mat2"):  # AMP105
            model(imgs, feats)
        logits = model.head(feats).half()
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            train.paste_depth(logits, valid, 4)  # AMP101
        with pytest.raises(RuntimeError, match="c10::Half without overflow"):
            train.mask_invalid(logits, valid)  # AMP110
        assert torch.isinf(train.depth_logprob(logits * 0 + 12)).all()  # AMP141: exp(12) > 65504
        # the twins: float32 logits and a history cast back run
        logits32 = model.head(feats)
        assert train.paste_depth(logits32, valid, 4).dtype == torch.float32
        assert torch.isfinite(train.depth_logprob(logits32 * 0 + 12)).all()
        assert model.fuse_history(feats, model.extract_history(imgs).float()).dtype == torch.float32
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "bevdepth" or m.startswith("bevdepth.")]:
            del sys.modules[name]


def test_the_search_stops_at_its_budget(monkeypatch):
    """Each name no other file holds reads every other text: the pass reads at most its budget
    (issue 34), and past it gives no entry (the names stay unbound)."""
    from amplint.analysis.project import local_callers

    body = "".join(f"def f{i}(x):\n    return x.half()\n" for i in range(40))
    body += "def run(x):\n" + "".join(f"    x = f{i}(x)\n" for i in range(40)) + "    return x\n"

    class Project:
        files = {"a.py": "import torch\n" + body, "b.py": "import torch\n" * 50}

    size = sum(len(t) for t in Project.files.values())
    assert len(local_callers.local_caller_entries(Project, sorted(Project.files))["a.py"][0].names) == 40
    monkeypatch.setattr(local_callers, "MIN_BUDGET", 10 * size)
    assert len(local_callers.local_caller_entries(Project, sorted(Project.files))["a.py"][0].names) == 10
