"""A callee's name is no evidence of a module output (issue 26; facts/half_evidence.py). AMP101
used to take `model(x)`, `encoder(x)`, `backbone(x)`... of a name it could not resolve as a
module whose output may be half under autocast: a report on a hunch. Only a module the project
shows counts now (`self.model` holding an instance of a project module class, a `torch.nn`
module, an instance of a module class of the file).

- nameguess_dino_knn (shaped like facebookresearch/dino's eval_knn.py: `extract_features(model,
  data_loader)` fills a kNN feature bank with `features.index_copy_(0, index, feats)`; here
  under autocast, and once more as a `FeatureBank` that builds its `VisionTransformer` itself).
  Run with a VisionTransformer under torch 2.13 CPU autocast (float16 and bfloat16) both raise
  'index_copy_(): self and source expected to have the same dtype'. The function's `model` is a
  parameter nothing in the project binds: silent, whatever the parameter is called. The
  `FeatureBank` shows its module: reported. Its clean twin (the features cast to the bank's
  dtype, `feats.float()`) is silent.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings

from project_files import code_findings, load

PROJECT = "nameguess_dino_knn"
SETTINGS = Settings.default()
SHOWN = ("eval_knn.py", 25, "AMP101")


def findings(replace=()):
    return code_findings(load(PROJECT, replace), "AMP101", SETTINGS)[0]


@pytest.mark.parametrize("name", ["model", "encoder", "backbone", "net", "head"])
def test_a_network_named_parameter_is_no_evidence_of_a_module_output(name):
    renamed = (("def extract_features(model,", f"def extract_features({name},"),
               ("feats = model(samples", f"feats = {name}(samples"))
    assert findings(renamed) == [SHOWN]


def test_a_module_the_project_builds_is_reported():
    assert findings() == [SHOWN]


def test_twin_casting_the_features_to_the_bank_dtype_is_silent():
    cast = (("index.cuda(non_blocking=True), feats)", "index.cuda(non_blocking=True), feats.float())"),)
    assert findings(cast) == []
