"""The project pass reads the functions that return an escaped half value, and the arguments
that pass one to a call, from the first pass's own escape walk (escape_returns.
first_pass_returns, escape_args.first_pass_arguments, kept on the file's summary) instead of
asking for a walk of the file again (issue 26's cost: on the mixed monorepo tree transformers'
esmfold2, two 110 k-character files AMP105 walks in the first pass, were walked again by the
pass for two empty answers: 0.32 s).

tests/projects/returns_lavis_features imitates salesforce/LAVIS's feature extraction (see
test_escape_returns.py): blip_feature_extractor.py returns its autocast region's projection,
similarity.py a matmul of its region; the example multiplies both with float32 tensors. The
twin whose callees cast back with `.float()` stays silent either way. tests/projects/
escape_args_arcface imitates deepinsight/insightface's arcface_torch (see test_escape_args.py):
train_v2.py hands the embeddings of its region to partial_fc_v2.py's `PartialFC_V2`; its twin
casts them back first; the pass names the backbone's output as a module output there, so the
first pass's walk (without it) is not used.
"""

from __future__ import annotations

import os
import shutil

import pytest

from project_files import PROJECTS, cli_findings

SCRIPT = "examples/feature_extraction.py"
MODEL = "lavis/models/blip_feature_extractor.py"
PROJECTS_USED = {
    "returns_lavis_features": (
        [(SCRIPT, 14, "AMP105"), (SCRIPT, 22, "AMP105")],
        {MODEL: ("        return image_features\n", "        return image_features.float()\n"),
         "lavis/common/similarity.py": ("        return queries @ projection\n",
                                        "        return (queries @ projection).float()\n")},
        ["blip_feature_extractor.py", "similarity.py"], []),
    "escape_args_arcface": (
        [("partial_fc_v2.py", 17, "AMP105"), ("partial_fc_v2.py", 24, "AMP105")],
        {"train_v2.py": ("            local_embeddings = backbone(img)\n",
                         "            local_embeddings = backbone(img).float()\n")},
        # the pass names a module output in train_v2.py (the backbone's forward): its walk
        # reads it, which the first pass's could not, so the pass walks the file still
        ["train_v2.py"], ["train_v2.py"]),
}
CASES = [(name, twin) for name in PROJECTS_USED for twin in (False, True)]


def _project(tmp_path, name: str, twin: bool):
    root = tmp_path / (name + ("_twin" if twin else ""))
    shutil.copytree(os.path.join(PROJECTS, name), root)
    if twin:
        for path, (old, new) in PROJECTS_USED[name][1].items():
            text = (root / path).read_text()
            assert old in text
            (root / path).write_text(text.replace(old, new))
    return root


def _run(root, monkeypatch):
    """(AMP105 findings of a cold -j 1 CLI run, the files escape_returns.py and escape_args.py
    asked a walk of, the EntryReturnsEscaped and EntryParamEscaped the pass handed out)."""
    import amplint.analysis.project.escape_args as escape_args
    import amplint.analysis.project.escape_returns as escape_returns
    import amplint.run.runner as runner

    asked, handed = [], []
    walk = getattr(escape_returns.output_escape, "counted_from", escape_returns.output_escape)
    passing = getattr(runner.project_entries, "counted_from", runner.project_entries)

    def output_escape(project, path):
        asked.append(os.path.basename(path))
        return walk(project, path)

    def project_entries(*args, **kwargs):
        found = passing(*args, **kwargs)
        handed.append(sorted((os.path.basename(path), repr(e)) for path in found for e in found[path]
                             if type(e).__name__ in ("EntryReturnsEscaped", "EntryParamEscaped")))
        return found

    output_escape.counted_from, project_entries.counted_from = walk, passing
    monkeypatch.setattr(escape_returns, "output_escape", output_escape)
    monkeypatch.setattr(escape_args, "output_escape", output_escape)
    monkeypatch.setattr(runner, "project_entries", project_entries)
    findings = cli_findings(root, "--no-cache", "-j", "1", codes=("AMP105",))
    return findings, asked, handed


@pytest.mark.parametrize("name,twin", [case for case in CASES if not PROJECTS_USED[case[0]][3]])
def test_the_pass_asks_no_walk_of_a_file_the_first_pass_walked(tmp_path, monkeypatch, name, twin):
    findings, asked, handed = _run(_project(tmp_path, name, twin), monkeypatch)
    assert findings == ([] if twin else PROJECTS_USED[name][0])
    assert sorted(set(asked)) == PROJECTS_USED[name][3]
    assert bool(handed[0]) != twin  # the entries are handed out where the hazard is


@pytest.mark.parametrize("name,twin", CASES)
def test_the_first_pass_answer_equals_the_pass_walk(tmp_path, monkeypatch, name, twin):
    import amplint.analysis.project.escape_args as escape_args
    import amplint.analysis.project.escape_returns as escape_returns

    root = _project(tmp_path, name, twin)
    read = _run(root, monkeypatch)
    monkeypatch.setattr(escape_returns, "first_pass_returns", lambda facts: None)
    monkeypatch.setattr(escape_args, "first_pass_arguments", lambda facts: None)
    walked = _run(root, monkeypatch)
    assert sorted(set(walked[1])) == PROJECTS_USED[name][2]  # the pass walks
    assert sorted(set(read[1])) == PROJECTS_USED[name][3]  # the first pass's walks, where they serve
    assert read[0] == walked[0] == ([] if twin else PROJECTS_USED[name][0])
    assert read[2] == walked[2]
