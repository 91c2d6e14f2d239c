"""A half value returned out of an autocast region to a caller in another file
(amplint/analysis/project/escape_returns.py; the escape walk reads it through
facts/returned_escapes.py, and AMP105 reports the use in the caller's file).

tests/projects/returns_lavis_features imitates salesforce/LAVIS's feature extraction:
lavis/models/__init__.py `load_model(name, ...)` builds the `BlipFeatureExtractor` of
lavis/models/blip_feature_extractor.py, whose `extract_image_features` projects the image
embeddings under `torch.autocast` and returns them, and `extract_text_features` returns the
float32 text projection; lavis/common/similarity.py `project_queries` returns a matmul of its
region. examples/feature_extraction.py (the README's example) multiplies the image features
with the text features, and the projected queries with a float32 corpus, outside any region:
'RuntimeError: expected mat1 and mat2 to have the same dtype'. Proven by running the project on
CPU under bfloat16 autocast; the twins that cast back with `.float()` run.
"""

from __future__ import annotations

import importlib
import os
import sys

import pytest

from amplint.analysis.engine import Settings

from project_files import PROJECTS, cli_findings, code_findings, load

NAME = "returns_lavis_features"
SCRIPT = "examples/feature_extraction.py"
MODEL = "lavis/models/blip_feature_extractor.py"
FINDINGS = [(SCRIPT, 14, "AMP105"), (SCRIPT, 22, "AMP105")]
RETURN_IMAGE = "        return image_features\n"
RETURN_QUERIES = "        return queries @ projection\n"
CPU = (('"cuda"', '"cpu"'), ("torch.float16", "torch.bfloat16"))


def amp105(files):
    return code_findings(files, "AMP105", Settings.default())[0]


def test_values_returned_out_of_another_files_region_meet_float32_and_are_reported():
    found, results = code_findings(load(NAME), "AMP105", Settings.default())
    assert found == FINDINGS
    messages = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP105"]
    assert "float16 from the autocast region at lavis/models/blip_feature_extractor.py:23 (returned by " \
           "`BlipFeatureExtractor.extract_image_features`" in messages[0]
    assert "(returned by `project_queries` at lavis/common/similarity.py:4)" in messages[1]


def test_the_cpu_bfloat16_twin_is_reported_too():
    assert amp105(load(NAME, CPU)) == FINDINGS


def test_callees_that_cast_back_are_silent():
    files = load(NAME, ((RETURN_IMAGE, "        return image_features.float()\n"),
                        (RETURN_QUERIES, "        return (queries @ projection).float()\n")))
    assert amp105(files) == []


def test_a_callee_with_one_return_that_casts_back_is_not_claimed():
    files = load(NAME, ((RETURN_IMAGE, "        if image.dim() == 3:\n            return image_features.float()\n"
                         + RETURN_IMAGE),))
    assert amp105(files) == [(SCRIPT, 22, "AMP105")]


def test_a_caller_inside_its_own_region_is_silent():
    files = load(NAME, (("    similarity = image_features @ text_features.t()\n",
                         "    with torch.autocast(\"cuda\"):\n        similarity = image_features @ text_features.t()\n"),
                        ("    return torch.mm(project_queries(queries, projection), corpus.t()).topk(3)\n",
                         "    with torch.autocast(\"cuda\"):\n"
                         "        return torch.mm(project_queries(queries, projection), corpus.t()).topk(3)\n")))
    assert amp105(files) == []


def test_a_receiver_the_flow_cannot_resolve_is_not_followed():
    files = load(NAME, (('    model = load_model("blip_feature_extractor", model_type="base", is_eval=True, device=device)\n',
                         "    model = torch.hub.load('salesforce/lavis', 'blip')\n"),))
    assert amp105(files) == [(SCRIPT, 22, "AMP105")]


def test_a_same_named_function_of_the_calling_file_is_not_confused():
    files = load(NAME, (("from lavis.common.similarity import project_queries\n",
                         "def project_queries(queries, projection):\n    return (queries @ projection).float()\n"),))
    assert amp105(files) == [(SCRIPT, 15, "AMP105")]  # (one line added above)


def test_warm_run_follows_an_edit_of_the_callee_only(tmp_path):
    """Only lavis/models/blip_feature_extractor.py changes: the script's finding goes and comes
    back with it (the script's cached result depends on the callee's file)."""
    import shutil

    root = tmp_path / NAME
    shutil.copytree(os.path.join(PROJECTS, NAME), root)
    cache = str(tmp_path / "cache")

    def run():
        return cli_findings(root, "--cache-dir", cache, codes=("AMP105",))

    assert run() == FINDINGS
    assert run() == FINDINGS
    path = root / MODEL
    text = path.read_text()
    path.write_text(text.replace(RETURN_IMAGE, "        return image_features.float()\n"))
    assert run() == FINDINGS[1:]
    path.write_text(text)
    assert run() == FINDINGS


def _run(tmp_path, monkeypatch, replace=()):
    """Import the project written under tmp_path and run the example's two functions on CPU."""
    torch = pytest.importorskip("torch")
    root = tmp_path / "proj"
    for path, text in load(NAME, CPU + tuple(replace)).items():
        target = root / path.split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (root / "examples" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(root))
    for name in [m for m in sys.modules if m == "lavis" or m.startswith(("lavis.", "examples"))]:
        monkeypatch.delitem(sys.modules, name)
    script = importlib.import_module("examples.feature_extraction")
    models = importlib.import_module("lavis.models")
    similarity = importlib.import_module("lavis.common.similarity")
    model = models.load_model("blip_feature_extractor", device="cpu")
    dtypes = (model.extract_image_features(torch.randn(2, 3, 16, 16)).dtype,
              model.extract_text_features(torch.randint(0, 100, (3, 5))).dtype,
              similarity.project_queries(torch.randn(4, 16), torch.randn(16, 16)).dtype)
    return torch, script, dtypes


@pytest.mark.torch
def test_the_reported_uses_raise_on_cpu_bfloat16(tmp_path, monkeypatch):
    torch, script, dtypes = _run(tmp_path, monkeypatch)
    assert dtypes == (torch.bfloat16, torch.float32, torch.bfloat16)  # what the entries claim
    with pytest.raises(RuntimeError, match="same dtype"):
        script.main("cpu")
    with pytest.raises(RuntimeError, match="same dtype"):
        script.rerank("cpu")


@pytest.mark.torch
def test_the_twin_that_casts_back_runs_on_cpu_bfloat16(tmp_path, monkeypatch):
    torch, script, dtypes = _run(tmp_path, monkeypatch, (
        (RETURN_IMAGE, "        return image_features.float()\n"),
        (RETURN_QUERIES, "        return (queries @ projection).float()\n")))
    assert dtypes == (torch.float32, torch.float32, torch.float32)
    assert script.main("cpu").dtype == torch.float32
    assert script.rerank("cpu").values.dtype == torch.float32
