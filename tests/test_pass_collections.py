"""Work of the project pass beside its answers (issue 34, framework trees): counted in
operations, not time.

- The pass's own `ast` parses (mmdetection's registry search reads ~225 files, detectron2's
  framework planning ~100, Lightning's scaler entries ~50) ran with the cyclic collector on:
  an `ast` tree is thousands of tracked young objects without cycles (a collection every ~700
  of them), and each full collection during the pass also walked the first pass's results.
  The registration reader's unit of work and the light class index now parse with no
  collection, and the first pass's results are frozen while the pass runs (unfrozen and
  collected after it, as before). Not the whole pass without collections: a -j 1 run's
  in-process LibCST summaries leave cycles that the per-file collection frees (fairseq's peak
  memory doubled that way).
- `node_lines(module, nodes)` without anchors generated the code of the whole module even
  when every wanted node came early (the GradScaler protocol summaries, the nograd / module
  entries' lines): it now stops after the last wanted node, with the same lines."""

from __future__ import annotations

import gc
import os

import libcst as cst

from amplint.analysis.facts.syntax import iter_nodes
from amplint.analysis.parsing import parse
from amplint.analysis.project import lines as lines_module
from amplint.analysis.project.lines import node_lines
from amplint.analysis.project import light_index
from amplint.run import project_inputs, runner
from tests.project_files import PROJECTS, cli_findings
from tests.test_project_lines import MODULE


def _heads_file(classes: int) -> str:
    """mmdetection's `mmdet/models/dense_heads/*.py` in small: registered heads with methods."""
    lines = ["import torch.nn as nn", "from mmdet.registry import MODELS", ""]
    for i in range(classes):
        lines += ["", "@MODELS.register_module()", f"class Head{i}(nn.Module):",
                  f"    def __init__(self, channels={i}, loss=dict(type='FocalLoss')):",
                  "        super().__init__()",
                  "        self.convs = nn.ModuleList([nn.Conv2d(channels, channels, 3) for _ in range(4)])",
                  "", "    def forward(self, x):",
                  "        return [conv(x).sigmoid() for conv in self.convs]"]
    return "\n".join(lines) + "\n"


def _collections_during(func, *args):
    started = []

    def note(phase, info):
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(note)
    try:
        return func(*args), started
    finally:
        gc.callbacks.remove(note)


def test_registrations_are_read_without_cyclic_collections(tmp_path):
    path = tmp_path / "heads.py"
    path.write_text(_heads_file(150))
    assert gc.isenabled()
    found, started = _collections_during(project_inputs.registrations_file, str(path))
    assert [cls for _, cls in found] == [f"Head{i}" for i in range(150)]
    assert len({registry for registry, _ in found}) == 1
    assert len(started) <= 1  # the one after it; before: one every ~700 new tree nodes (here ~25)
    assert gc.isenabled()  # collected as usual after it


def test_the_pass_collections_leave_the_first_pass_results_alone(tmp_path, monkeypatch):
    """A small mmdetection-shaped tree: during the pass every object made before it is frozen
    (no collection of the pass walks it), and unfrozen after it (collected as usual)."""
    (tmp_path / "mmdet" / "models").mkdir(parents=True)
    (tmp_path / "mmdet" / "__init__.py").write_text("")
    (tmp_path / "mmdet" / "registry.py").write_text("MODELS = object()\n")
    (tmp_path / "mmdet" / "models" / "__init__.py").write_text("")
    (tmp_path / "mmdet" / "models" / "heads.py").write_text(_heads_file(20))
    frozen = []
    real = runner.project_entries

    def spy(*args, **kwargs):
        frozen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "project_entries", spy)
    before = gc.get_freeze_count()
    cli_findings(str(tmp_path), "--no-cache", "-j", "1")
    assert len(frozen) == 1 and frozen[0] > before + 1000  # the first pass's results, the run's modules
    assert gc.get_freeze_count() == before and gc.isenabled()


def test_the_pass_collections_walk_each_survivor_once(monkeypatch):
    """Nearly all the pass makes lives until it ends (summaries, indexes, memos): what a
    collection of the pass leaves is frozen at once, so no later collection of the pass walks
    it again (before: the middle and the full collections walked it once more each; fairseq
    -j 1: 2.55M objects walked, 1.78M now). Counted with the collector made eager, so that a
    small tree has collections of every generation."""
    older = []  # per collection in the pass: the objects it walks beyond the youngest generation
    in_pass = []
    real = runner.project_entries

    def note(phase, info):
        if phase == "start" and in_pass:
            older.append(sum(len(gc.get_objects(generation=g)) for g in range(1, info["generation"] + 1)))

    def spy(*args, **kwargs):
        in_pass.append(True)
        try:
            return real(*args, **kwargs)
        finally:
            in_pass.clear()

    monkeypatch.setattr(runner, "project_entries", spy)
    thresholds = gc.get_threshold()
    before = gc.get_freeze_count()
    gc.set_threshold(100, 2, 2)
    gc.callbacks.append(note)
    try:
        cli_findings(os.path.join(PROJECTS, "d2_project_registry"), "--no-cache", "-j", "1")
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*thresholds)
    assert len(older) >= 10  # the pass collected, older generations included
    assert sum(older) == 0  # before: thousands of objects walked again
    assert gc.get_freeze_count() == before and gc.isenabled()


def test_the_pass_drops_its_facts_when_it_has_its_entries(monkeypatch):
    """The pass's facts and memos hold cycles (an index holding the project that holds it): left
    whole, all of them were garbage for the collection after the pass to walk (fairseq: 162K
    objects, detectron2 69K). Dropped once the pass has its entries, most are freed at once by
    reference counting (that collection then finds fairseq 60K, detectron2 28K)."""
    built = []
    kept = []
    real_build, real_entries = project_inputs.build, runner.project_entries

    def build(*args, **kwargs):
        project = real_build(*args, **kwargs)
        built.append(project)
        return project

    def entries(*args, **kwargs):
        found = real_entries(*args, **kwargs)
        kept.extend(name for project in built for name in vars(project))
        return found

    monkeypatch.setattr(project_inputs, "build", build)
    monkeypatch.setattr(runner, "project_entries", entries)
    findings = cli_findings(os.path.join(PROJECTS, "d2_project_registry"), "--no-cache", "-j", "1")
    assert findings  # the entries came back: the lint after the pass found them
    assert len(built) == 1 and kept == []  # before: every fact and memo of the pass


def test_light_index_parses_without_cyclic_collections():
    text = _heads_file(150)
    found, started = _collections_during(light_index.light_file, "heads.py", text)
    assert found.names == tuple(f"Head{i}" for i in range(150)) and found.exact
    assert len(started) <= 1 and gc.isenabled()


def _statements(count: int) -> str:
    return "def first(x):\n    return x.half()\n\n" + "".join(f"y{i} = first({i})\n" for i in range(count))


def test_node_lines_stop_after_the_last_wanted_node(monkeypatch):
    seen = []
    original = lines_module._LineState.before_codegen

    def counting(self, node):
        seen.append(1)
        return original(self, node)

    monkeypatch.setattr(lines_module._LineState, "before_codegen", counting)
    counts = []
    for count in (5, 200):
        module = parse(_statements(count))
        name = module.body[0].name
        seen.clear()
        assert node_lines(module, [name]) == {id(name): 1}
        counts.append(len(seen))
    assert counts[0] == counts[1]  # before: every node of the module, 200 statements included


def test_node_lines_without_anchors_equal_one_whole_generation():
    module = parse(MODULE)
    nodes = [node for node in iter_nodes(module)
             if isinstance(node, (cst.Call, cst.Param, cst.BaseStatement, cst.Name))]
    whole = lines_module._generated_lines(module, module, {id(node) for node in nodes})
    assert node_lines(module, nodes) == whole and len(set(whole.values())) >= 60
    for start in range(0, len(nodes), 7):  # early, late and spread-out picks
        for picked in (nodes[start:start + 1], nodes[start::11], nodes[:start + 1]):
            assert node_lines(module, picked) == {id(node): whole[id(node)] for node in picked}
    assert node_lines(module, [parse("x = 1").body[0]]) == {}  # a node of another tree: none
