"""A half value passed out of an autocast region into a function of another file
(amplint/analysis/project/escape_args.py; the callee's escape walk starts the parameter from
it through facts/returned_escapes.py, and AMP105 reports the callee's dtype-strict use).

tests/projects/escape_args_arcface imitates deepinsight/insightface's recognition/arcface_torch:
train_v2.py computes the embeddings under `torch.autocast` with the MobileFaceNet module that
backbones.get_model builds (backbones/mobilefacenet.py: its output under the region is the
region's half value, project/module_outputs.py) and, after the region, calls the `PartialFC_V2` module of partial_fc_v2.py, whose forward
runs `F.linear` of the normalised embeddings against its float32 class centres
(`torch.nn.Parameter(torch.normal(0, 0.01, ...))`), and its `update_centers` method, which
writes them into the centres with `index_copy_`. Proven by running it on CPU under bfloat16
autocast: 'expected mat1 and mat2 to have the same dtype' and 'index_copy_(): self and source
expected to have the same dtype'; the twin that casts back with `.float()` trains.
"""

from __future__ import annotations

import importlib
import os
import sys

import pytest

from amplint.analysis.engine import Settings

from project_files import PROJECTS, cli_findings, code_findings, load

NAME = "escape_args_arcface"
FINDINGS = [("partial_fc_v2.py", 17, "AMP105"), ("partial_fc_v2.py", 24, "AMP105")]
EMBED = "            local_embeddings = backbone(img)\n"
CAST_BACK = ((EMBED, "            local_embeddings = backbone(img).float()\n"),)
CPU = (('device="cuda"', 'device="cpu"'),
       ("torch.autocast(cfg.device, enabled=cfg.fp16)",
        "torch.autocast(cfg.device, dtype=torch.bfloat16, enabled=cfg.fp16)"))


def amp105(files):
    return code_findings(files, "AMP105", Settings.default())[0]


def test_half_embeddings_passed_to_another_files_module_and_method_are_reported_there():
    found, results = code_findings(load(NAME), "AMP105", Settings.default())
    assert found == FINDINGS
    messages = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP105"]
    assert "from the autocast region at train_v2.py:21 (produced at line 22), passed by the call at " \
           "train_v2.py:23" in messages[0]
    assert "passed by the call at train_v2.py:28" in messages[1]
    assert "'RuntimeError: index_copy_(): self and source expected to have the same dtype'" in messages[1]


def test_the_cpu_bfloat16_twin_is_reported_too():
    assert amp105(load(NAME, CPU)) == FINDINGS


def test_embeddings_cast_back_in_the_region_are_silent():
    assert amp105(load(NAME, CAST_BACK)) == []


def test_a_torch_module_output_is_followed_the_same_way():
    files = load(NAME, ((EMBED, "            local_embeddings = neck(img.flatten(1))\n"),
                        ("    module_partial_fc = PartialFC_V2(", "    neck = torch.nn.Linear(768, 16)\n    module_partial_fc = PartialFC_V2(")))
    assert amp105(files) == FINDINGS


def test_a_backbone_class_whose_bases_are_not_followed_is_not_taken_as_a_module():
    files = load(NAME, (("class MobileFaceNet(nn.Module):", "class MobileFaceNet(Backbone):"),
                        ("from torch import nn\n", "from torch import nn\n\nfrom timm.models import Backbone\n")))
    assert amp105(files) == []


def test_a_backbone_a_function_returns_is_not_a_module_output():
    files = load(NAME, (("        return MobileFaceNet(**kwargs)\n", "        return lambda img: img.flatten(1)[:, :16]\n"),))
    assert amp105(files) == []


def test_a_call_inside_the_region_is_silent():
    files = load(NAME, (("        loss = module_partial_fc(local_embeddings, local_labels)\n",
                         "            loss = module_partial_fc(local_embeddings, local_labels)\n"),))
    assert amp105(files) == [("partial_fc_v2.py", 24, "AMP105")]


def test_an_argument_that_is_not_the_region_value_is_not_followed():
    files = load(NAME, (("module_partial_fc.update_centers(local_embeddings.detach(), local_labels)",
                         "module_partial_fc.update_centers(img.flatten(1)[:, :16], local_labels)"),))
    assert amp105(files) == [("partial_fc_v2.py", 17, "AMP105")]


def test_a_callee_the_flow_cannot_resolve_is_not_followed():
    files = load(NAME, (("    module_partial_fc = PartialFC_V2(CosFace(), cfg.embedding_size, cfg.num_classes).to(cfg.device)\n",
                         "    module_partial_fc = torch.hub.load('insightface', 'partial_fc')\n"),))
    assert amp105(files) == []


def test_a_staticmethod_is_not_bound_with_self_left_out():
    files = load(NAME, (("    @torch.no_grad()\n    def update_centers(self, embeddings, labels):\n",
                         "    @staticmethod\n    def update_centers(embeddings, labels):\n"),
                        ("        self.weight.data.index_copy_(0, labels, normalize(embeddings))\n",
                         "        torch.zeros(20, 16).index_copy_(0, labels, normalize(embeddings))\n")))
    assert amp105(files) == [("partial_fc_v2.py", 17, "AMP105")]


def test_a_number_factory_with_a_tensor_mean_is_not_taken_as_float32():
    """`torch.normal(mean, std, size)` is float32 only with Python-number mean and std: with a
    tensor mean the centres' dtype is not known, and both uses stay silent."""
    files = load(NAME, (("torch.normal(0, 0.01, (num_classes, embedding_size))",
                         "torch.normal(centres, 0.01, (num_classes, embedding_size))"),))
    assert amp105(files) == []


def test_warm_run_follows_an_edit_of_the_caller_only(tmp_path):
    import shutil

    root = tmp_path / NAME
    shutil.copytree(os.path.join(PROJECTS, NAME), root)
    cache = str(tmp_path / "cache")

    def run():
        return cli_findings(root, "--cache-dir", cache, codes=("AMP105",))

    assert run() == FINDINGS
    assert run() == FINDINGS
    path = root / "train_v2.py"
    text = path.read_text()
    path.write_text(text.replace(*CAST_BACK[0]))
    assert run() == []
    path.write_text(text)
    assert run() == FINDINGS


def _modules(tmp_path, monkeypatch, replace=()):
    pytest.importorskip("torch")
    root = tmp_path / "proj"
    for path, text in load(NAME, CPU + tuple(replace)).items():
        target = root / path.split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    monkeypatch.syspath_prepend(str(root))
    for name in [m for m in sys.modules if m.split(".")[0] in ("configs", "backbones", "partial_fc_v2",
                                                                "losses", "train_v2")]:
        monkeypatch.delitem(sys.modules, name)
    return importlib.import_module("train_v2"), importlib.import_module("partial_fc_v2")


@pytest.mark.torch
def test_the_reported_uses_raise_on_cpu_bfloat16(tmp_path, monkeypatch):
    import torch

    train, pfc = _modules(tmp_path, monkeypatch)
    backbone = importlib.import_module("backbones").get_model("mbf", num_features=16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        embeddings = backbone(torch.randn(4, 3, 16, 16))
    assert embeddings.dtype == torch.bfloat16  # the module output the caller's entry claims half
    module = pfc.PartialFC_V2(train.CosFace(), 16, 20)
    assert module.weight.dtype == torch.float32  # torch.normal(0, 0.01, size)
    labels = torch.tensor([1, 2, 3, 4])
    with pytest.raises(RuntimeError, match="same dtype"):
        module(embeddings, labels)
    with pytest.raises(RuntimeError, match=r"index_copy_\(\): self and source expected to have the same dtype"):
        module.update_centers(embeddings.detach(), labels)
    with pytest.raises(RuntimeError, match="same dtype"):
        train.main("ms1mv3_r50")


@pytest.mark.torch
def test_the_twin_that_casts_back_trains_on_cpu_bfloat16(tmp_path, monkeypatch):
    import torch

    train, _ = _modules(tmp_path, monkeypatch, CAST_BACK)
    assert train.main("ms1mv3_r50").dtype == torch.float32
