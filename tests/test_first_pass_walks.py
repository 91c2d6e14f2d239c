"""The project pass reads what it needs of a region file's escape and dtype walks (escape_returns,
escape_args, region_args) from the first pass's own facts of the same text
(project/first_pass_walks.py), kept outside the module summary, instead of building the facts
and walking the file again (issue 26's cost: on the mixed monorepo tree transformers' esmfold2,
two 110 k-character files the first pass's rules walk, were walked again by the pass for empty
answers: ~0.3 s).

tests/projects/returns_lavis_features imitates salesforce/LAVIS's feature extraction (see
test_escape_returns.py): blip_feature_extractor.py returns its autocast region's projection,
similarity.py a matmul of its region; the example multiplies both with float32 tensors; the twin
whose callees cast back with `.float()` stays silent. tests/projects/escape_args_arcface imitates
deepinsight/insightface's arcface_torch (test_escape_args.py) and tests/projects/
regionarg_gfpgan_faces TencentARC/GFPGAN (test_region_args.py): there the pass names a module
output in the region file (the backbone's, the generator's), which the first pass's facts do not
read, so the pass walks those files still.
"""

from __future__ import annotations

import os
import shutil

import pytest

from project_files import PROJECTS, cli_findings

SCRIPT = "examples/feature_extraction.py"
MODEL = "lavis/models/blip_feature_extractor.py"
PROJECTS_USED = {
    # name: (findings, twin edits, files the pass walks without the first pass's answers, with them)
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
        ["train_v2.py"], ["train_v2.py"]),
    "regionarg_gfpgan_faces": (
        [("gfpgan/face_utils.py", 11, "AMP101")],
        {"gfpgan/utils.py": ("scatter_restored_faces(output, keep_idx", "scatter_restored_faces(output.float(), keep_idx")},
        ["utils.py"], ["utils.py"]),
}
CASES = [(name, twin) for name in PROJECTS_USED for twin in (False, True)]
KINDS = ("EntryReturnsEscaped", "EntryParamEscaped", "EntryRegionArg")


def _project(tmp_path, name: str, twin: bool):
    root = tmp_path / (name + ("_twin" if twin else ""))
    shutil.copytree(os.path.join(PROJECTS, name), root)
    if twin:
        for path, (old, new) in PROJECTS_USED[name][1].items():
            text = (root / path).read_text()
            assert old in text
            (root / path).write_text(text.replace(old, new))
    return root


def _run(root, monkeypatch, jobs="1"):
    """(AMP105/AMP101 findings of a cold CLI run (`jobs` workers), the files escape_returns, escape_args and
    region_args had the pass walk, the entries of those three kinds the pass handed out)."""
    import amplint.analysis.project.module_outputs as module_outputs
    import amplint.analysis.project.region_args as region_args
    import amplint.run.runner as runner

    asked, handed = [], []

    def counted(module, name):
        inner = getattr(module, name)
        inner = getattr(inner, "counted_from", inner)

        def walk(project, path):
            asked.append(os.path.basename(path))
            return inner(project, path)

        walk.counted_from = inner
        monkeypatch.setattr(module, name, walk)

    counted(module_outputs, "output_escape")  # (escape_returns' and escape_args' walks, module_outputs.answer_or_walk)
    counted(region_args, "output_facts")
    passing = getattr(runner.project_entries, "counted_from", runner.project_entries)

    def project_entries(*args, **kwargs):
        found = passing(*args, **kwargs)
        handed.append(sorted((os.path.basename(path), repr(e)) for path in found for e in found[path]
                             if type(e).__name__ in KINDS))
        return found

    project_entries.counted_from = passing
    monkeypatch.setattr(runner, "project_entries", project_entries)
    _forget()
    findings = cli_findings(root, "--no-cache", "-j", jobs, codes=("AMP105", "AMP101"))
    _forget()
    return findings, asked, handed


def _forget():
    from amplint.analysis.project.first_pass_walks import drop_answers

    drop_answers()  # another run of the same texts in this process would read them


@pytest.mark.parametrize("jobs", ["1", "2"])  # "2": the workers' lint hands the answers back
@pytest.mark.parametrize("name,twin", [case for case in CASES if not PROJECTS_USED[case[0]][3]])
def test_the_pass_asks_no_walk_of_a_file_the_first_pass_walked(tmp_path, monkeypatch, name, twin, jobs):
    import amplint.run.parallel as parallel

    monkeypatch.setattr(parallel, "MIN_FILES_PER_WORKER", 1)  # a pool for a few files
    findings, asked, handed = _run(_project(tmp_path, name, twin), monkeypatch, jobs)
    assert findings == ([] if twin else PROJECTS_USED[name][0])
    assert sorted(set(asked)) == PROJECTS_USED[name][3]
    assert bool(handed[0]) != twin  # the entries are handed out where the hazard is


@pytest.mark.parametrize("name,twin", CASES)
def test_the_first_pass_answers_equal_the_pass_walks(tmp_path, monkeypatch, name, twin):
    import amplint.run.per_file as per_file

    root = _project(tmp_path, name, twin)
    read = _run(root, monkeypatch)
    monkeypatch.setattr(per_file, "first_pass_walks", lambda *args: None)
    walked = _run(root, monkeypatch)
    assert sorted(set(walked[1])) == PROJECTS_USED[name][2]  # the pass walks
    assert sorted(set(read[1])) == PROJECTS_USED[name][3]  # where a module output is named: still
    assert read[0] == walked[0] == ([] if twin else PROJECTS_USED[name][0])
    assert read[2] == walked[2]


def _region_files():
    for name in sorted(os.listdir(PROJECTS)):
        for folder, _, names in os.walk(os.path.join(PROJECTS, name)):
            for base in sorted(names):
                if base.endswith(".py"):
                    path = os.path.join(folder, base)
                    with open(path, encoding="utf-8") as handle:
                        text = handle.read()
                    if "autocast" in text or "amp" in text:
                        yield path, text


def test_the_answers_from_a_linted_files_facts_equal_those_of_fresh_facts():
    """Every file of tests/projects naming autocast: the answers kept from the facts the first
    pass's rules used equal those the pass computes from facts of its own (their walks made
    by it, in its order)."""
    from amplint.analysis.engine import Settings, lint_source
    from amplint.analysis.facts import FileFacts
    from amplint.analysis.facts.escape import may_escape
    from amplint.analysis.project import first_pass_answers
    from amplint.analysis.project.escape_args import escaped_arguments
    from amplint.analysis.project.escape_returns import returning_functions
    from amplint.analysis.project.module_outputs import region_calls
    from amplint.analysis.project.region_args import half_arguments
    from amplint.analysis.project.summary import portable_summary

    compared = answered = calls = 0
    for path, text in _region_files():
        kept = {}

        def summarize(path, source, module, facts):
            kept["facts"] = facts
            return portable_summary(path, source, module, facts)

        result = lint_source(path, text, Settings.default(), False, (), summarize)
        if not result.summary or not result.summary.regions or "facts" not in kept:
            continue
        compared += 1
        answers = first_pass_answers._answers(kept["facts"], True, True)
        fresh = FileFacts(kept["facts"].module)
        if not may_escape(fresh):
            assert answers.get("returns", ()) == answers.get("escaped_args", ()) == ()
        if "returns" in answers and may_escape(fresh):
            answered += 1
            assert answers["returns"] == tuple(returning_functions(fresh.module, fresh, fresh.escape)), path
            assert answers["escaped_args"] == tuple(escaped_arguments(fresh.module, fresh, fresh.escape)), path
        if "half_args" in answers:
            assert answers["half_args"] == tuple(half_arguments(fresh.module, FileFacts(fresh.module))), path
        if "region_calls" in answers:
            calls += bool(answers["region_calls"])
            assert answers["region_calls"] == tuple(region_calls(fresh.module, fresh, fresh.escape)), path
    assert compared >= 20 and answered >= 5 and calls >= 3


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("twin", [False, True])
def test_the_module_outputs_read_the_calls_under_a_region_from_the_first_pass(tmp_path, monkeypatch, twin, jobs):
    """arcface_torch's train_v2.py (deepinsight/insightface): `local_embeddings = backbone(img)`
    under its region, `backbone` a project module of backbones/. module_outputs.py asks which
    calls under the file's half regions its own facts leave unresolved: the first pass's rules
    walked the same text's escapes, so the pass reads their answer and neither builds the
    file's facts nor walks its escapes for it (on start: one escape walk of train_v2.py, in a
    pool's run too). The module output is still named (the findings of the other tests here)."""
    import amplint.analysis.project.module_outputs as module_outputs
    import amplint.run.parallel as parallel

    monkeypatch.setattr(parallel, "MIN_FILES_PER_WORKER", 1)  # a pool for a few files
    walked = []
    inner = module_outputs.escape_facts

    def escape_facts(project, path):
        walked.append(os.path.basename(path))
        return inner(project, path)

    monkeypatch.setattr(module_outputs, "escape_facts", escape_facts)
    findings, _asked, handed = _run(_project(tmp_path, "escape_args_arcface", twin), monkeypatch, jobs)
    assert findings == ([] if twin else PROJECTS_USED["escape_args_arcface"][0])
    assert bool(handed[0]) != twin
    assert walked == []
