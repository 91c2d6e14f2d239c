"""The framework seeds' plan is lazy (issue 34, round 36): the files detectron2's text test
picks, and the waves of their subclasses, are parsed for their class names only when a loop
over every summary needs them, or when the class flow's parse budget asks whether one file is
planned; that question is answered by reading the class names along one chain of bases, not by
working out the whole plan. The answers (entries, findings, what the budget counts) are the
ones the whole plan gives.

The project is shaped like detectron2's `projects/PointRend` layout: a train_net.py, a yacs
YAML config turning AMP on and naming the ROI heads, a `@ROI_HEADS_REGISTRY.register()` head,
a mask head module importing `detectron2.modeling` (its docstring shows a `class` line, and a
class nested in another), cascade heads subclassing it over two waves, and modules whose bases
only look like those names."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.parsing import python_tree
from amplint.analysis.project import build, lint_project
from amplint.analysis.project import frameworks as fw
from amplint.analysis.project import light_index
from amplint.analysis.project import seed_files
from tests.test_project import findings

SETTINGS = Settings.default()

CONFIG = """MODEL:
  MASK_ON: True
  ROI_HEADS:
    NAME: "PointSupROIHeads"
SOLVER:
  AMP:
    ENABLED: {enabled}
"""

TRAIN_NET = """from detectron2.config import get_cfg
from detectron2.engine import DefaultTrainer, default_argument_parser, launch

import point_sup.roi_heads  # noqa: F401  registers PointSupROIHeads


def main(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    trainer = DefaultTrainer(cfg)
    return trainer.train()


if __name__ == "__main__":
    launch(main, 1, args=(default_argument_parser().parse_args(),))
"""

ROI_HEADS = """import torch
import torch.nn.functional as F
from detectron2.modeling import ROI_HEADS_REGISTRY, StandardROIHeads


@ROI_HEADS_REGISTRY.register()
class PointSupROIHeads(StandardROIHeads):
    def forward(self, images, features, proposals, targets=None):
        logits = self.mask_head(features, proposals)
        gt = torch.cat([p.gt_masks for p in proposals]).float()
        return proposals, {"loss_mask": F.binary_cross_entropy(logits.sigmoid(), gt)}
"""

MASK_HEAD = '''"""Point-supervised mask heads. Subclass the base as in

class MyHead(PointMaskHead):
    ...
"""
import torch.nn as nn
from detectron2.modeling import ROI_MASK_HEAD_REGISTRY


class PointMaskHead(nn.Module):
    class Options:
        points = 14

    def forward(self, x):
        return x
'''

CASCADE = """from point_sup.mask_head import PointMaskHead


class CascadePointHead(PointMaskHead):
    def forward(self, x):
        return super().forward(x) * 2
"""

DEEP = """from point_sup.cascade import CascadePointHead


class DeepCascadePointHead(CascadePointHead):
    pass
"""

# bases that only the docstring's and the nested class's names match
LOOKALIKES = """from somewhere import MyHead, Options


class Configured(Options):
    pass


class Mine(MyHead):
    pass


class Again(Mine):
    pass
"""


def _files(enabled: bool = True):
    return {
        "point_rend/configs/point_sup.yaml": CONFIG.format(enabled=enabled),
        "point_rend/train_net.py": TRAIN_NET,
        "point_rend/point_sup/__init__.py": "",
        "point_rend/point_sup/roi_heads.py": ROI_HEADS,
        "point_rend/point_sup/mask_head.py": MASK_HEAD,
        "point_rend/point_sup/cascade.py": CASCADE,
        "point_rend/point_sup/deep_cascade.py": DEEP,
        "point_rend/point_sup/lookalikes.py": LOOKALIKES,
    }


class _CountingTrees:
    """light_index.py's `python_tree`, recording the texts it is asked to read."""

    def __init__(self) -> None:
        self.parsed = []

    def __call__(self, text):
        self.parsed.append(text)
        return python_tree(text)


def _counting(monkeypatch) -> _CountingTrees:
    counter = _CountingTrees()
    monkeypatch.setattr(light_index, "python_tree", counter)
    monkeypatch.setattr(light_index, "_MEMO", {})
    return counter


def _eager(monkeypatch):
    """The plan worked out when it is made, as before round 36."""
    made = seed_files.SeedFiles.__init__

    def eager(self, project, chosen):
        made(self, project, chosen)
        self.files

    monkeypatch.setattr(seed_files.SeedFiles, "__init__", eager)


def test_a_setting_its_config_scopes_parses_no_planned_file(monkeypatch):
    files = _files()
    counter = _counting(monkeypatch)
    project = build(files, SETTINGS)
    # the config names PointSupROIHeads: no loop reads every summary, nothing asks for the plan
    assert counter.parsed == []
    found = findings(lint_project(files, SETTINGS))
    assert found == [("point_rend/point_sup/roi_heads.py", 11, "AMP102")]
    _eager(monkeypatch)
    full = build(files, SETTINGS)
    assert len(counter.parsed) >= 3  # the whole plan reads every planned file's classes
    assert {p: full.entries_for(p) for p in files} == {p: project.entries_for(p) for p in files}
    assert full.flow._parses == project.flow._parses
    assert findings(lint_project(files, SETTINGS)) == found


def test_clean_twin_without_amp_is_silent():
    assert findings(lint_project(_files(enabled=False), SETTINGS)) == []


def _chosen(project):
    pattern = fw.CLASS_TEXT["detectron2"]
    return [path for path in project.python if path not in project.summaries
            and pattern.search(project.files[path]) and "\nclass " in project.files[path]]


def test_whether_a_file_is_planned_is_answered_without_the_plan(monkeypatch):
    files = _files()
    project = build(files, SETTINGS)
    project.summaries.pop("point_rend/point_sup/mask_head.py", None)
    chosen = _chosen(project)
    assert "point_rend/point_sup/mask_head.py" in chosen
    counter = _counting(monkeypatch)
    lazy = seed_files.SeedFiles(project, chosen)
    held = {path: lazy.holds(path) for path in project.python}
    assert lazy.made == 0
    # the wave files are planned through the class names along their chain of bases, read
    # from those files alone (not roi_heads.py); the lookalikes' bases are names only a
    # docstring and a nested class write
    assert sorted(counter.parsed) == sorted([MASK_HEAD, CASCADE])
    plan = seed_files.SeedFiles(project, chosen).files
    assert {path for path, found in held.items() if found} == set(plan)
    assert "point_rend/point_sup/deep_cascade.py" in plan
    assert "point_rend/point_sup/lookalikes.py" not in plan
    assert "point_rend/point_sup/lookalikes.py" in lazy.outline()


FUSED = """import torch


def run_fused(model, x):
    with torch.autocast("cuda"):
        return model(x)
"""

# two classes of one name: the index cannot vouch for the names, so the plan summarises it
HALF_EXPORT = """from detectron2.modeling import build_model
from point_sup.fused import run_fused


class Exporter:
    pass


class Exporter:
    def export(self, cfg, x):
        model = build_model(cfg)
        model.half()
        return run_fused(model, x)
"""


def _half_files(enabled: bool = True):
    files = _files(enabled)
    files["point_rend/point_sup/fused.py"] = FUSED
    files["point_rend/point_sup/half_export.py"] = HALF_EXPORT
    return files


def test_a_planned_file_the_index_cannot_read_is_read_as_when_the_plan_summarised_it(monkeypatch):
    files = _half_files()
    lazy = findings(lint_project(files, SETTINGS))
    _eager(monkeypatch)
    assert findings(lint_project(files, SETTINGS)) == lazy
    assert ("point_rend/point_sup/half_export.py", 12, "AMP103") in lazy
