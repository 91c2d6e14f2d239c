"""One report per hazard (issue 26): a finding a rule reports at a call, for an event the call
reaches (`clip_grad_norm_` in a helper, "through this call"), is dropped when the helper's own
lint already reports that event under the same code. The report at the event stays: it is where
the fix goes, and where a region reached through a call is reported (at the event inside the
callee, citing the call).

tests/projects/reid_engine_clip is laid out like KaiyangZhou/deep-person-reid
(torchreid/engine/engine.py Engine with the epoch loop `train` and a `clip_and_step` helper that
clips and runs `self.scaler.step`; torchreid/engine/image/softmax.py ImageSoftmaxEngine whose
`forward_backward` scales the loss and calls the helper; scripts/main.py). Before, AMP120 reported
the clip twice: at engine.py's clip and at softmax.py's call of the helper.
"""

from __future__ import annotations

import os

import pytest

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.engine import Settings, lint_source
from amplint.workspace.cache import diagnostic_from_dict, diagnostic_to_dict

from project_files import PROJECTS, cli_findings, code_findings, load

SETTINGS = Settings.default()
NAME = "reid_engine_clip"
ENGINE = "torchreid/engine/engine.py"
SOFTMAX = "torchreid/engine/image/softmax.py"
CLIP = (ENGINE, 27, "AMP120")
CALL = (SOFTMAX, 27, "AMP120")
CLIP_LINE = "            torch.nn.utils.clip_grad_norm_("
UNSCALED = "            self.scaler.unscale_(self._optims[name])\n" + CLIP_LINE
# another method of engine.py unscales this scaler: the helper alone does not show the hazard
UNSCALE_ALL = ("    def train(self, print_freq=10):",
               "    def unscale_all(self):\n"
               "        for optim in self._optims.values():\n"
               "            self.scaler.unscale_(optim)\n\n"
               "    def train(self, print_freq=10):")


def findings(*edits):
    return code_findings(load(NAME, edits), "AMP120", SETTINGS)[0]


def test_the_clip_is_reported_once_at_the_clip():
    assert findings() == [CLIP]


def test_the_cli_run_reports_it_once_too(tmp_path):
    root = os.path.join(PROJECTS, NAME)
    assert cli_findings(root, "--no-cache", "--jobs", "1", codes=("AMP120",)) == [CLIP]
    cache = str(tmp_path / "cache")
    for _ in range(2):  # cold, then from the cache: the finding keeps what it reached
        assert cli_findings(root, "--cache-dir", cache, "--jobs", "1", codes=("AMP120",)) == [CLIP]


def test_the_call_stays_when_the_helper_alone_does_not_report():
    assert findings(UNSCALE_ALL) == [CALL]


def test_the_clean_twin_is_silent():
    assert findings((CLIP_LINE, UNSCALED)) == []


SAME_FILE = '''import torch


class Engine:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def clip_and_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()


class ImageSoftmaxEngine(Engine):
    def forward_backward(self, imgs, pids):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(self.model(imgs), pids)
        self.scaler.scale(loss).backward()
        self.clip_and_step()
'''


def test_in_one_file_the_clip_is_reported_once_at_the_clip():
    result = lint_source("engine.py", SAME_FILE, SETTINGS)
    assert [(d.line, d.code) for d in result.diagnostics] == [(11, "AMP120")]


def test_what_a_finding_reached_survives_the_cache():
    diag = Diagnostic("AMP120", "m", Severity.ERROR, None, through=("a/engine.py", 27), filename="b.py", line=3)
    assert diagnostic_from_dict(diagnostic_to_dict(diag)).through == ("a/engine.py", 27)
    assert diag.stripped().through == ("a/engine.py", 27)


# A `# noqa` at the event silences the hazard, not only its report there: the call's report of
# the same hazard (dropped while the event is reported) must not come back once it is silenced,
# and `--add-noqa` marks only the finding the run reports.

def _copy(tmp_path, edits=()):
    root = tmp_path / NAME
    for rel, text in load(NAME, edits).items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def _noqa_lines(root):
    return sorted((str(p.relative_to(root)).replace(os.sep, "/"), n)
                  for p in root.rglob("*.py")
                  for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                  if "# noqa" in line)


def test_add_noqa_marks_the_event_only_and_the_next_run_is_clean(tmp_path):
    from project_files import cli_output

    root = _copy(tmp_path)
    cli_output(str(root), "--add-noqa", "--no-cache", "--jobs", "1")
    assert _noqa_lines(root) == [(ENGINE, CLIP[1])]
    assert cli_findings(str(root), "--no-cache", "--jobs", "1", codes=("AMP120",)) == []
    cache = str(tmp_path / "cache")
    for _ in range(2):  # cold, then from the cache: what the noqa silenced is kept there too
        assert cli_findings(str(root), "--cache-dir", cache, "--jobs", "1", codes=("AMP120",)) == []


def test_a_noqa_at_the_event_silences_the_call_too(tmp_path):
    files = load(NAME)
    engine = NAME + "/" + ENGINE
    lines = files[engine].splitlines(keepends=True)
    assert lines[CLIP[1] - 1].startswith(CLIP_LINE)
    lines[CLIP[1] - 1] = lines[CLIP[1] - 1].rstrip("\n") + "  # noqa: AMP120\n"
    files[engine] = "".join(lines)
    assert code_findings(files, "AMP120", SETTINGS)[0] == []
    root = _copy(tmp_path)
    (root / ENGINE).write_text(files[engine], encoding="utf-8")
    assert cli_findings(str(root), "--no-cache", "--jobs", "1", codes=("AMP120",)) == []


def test_in_one_file_a_noqa_at_the_clip_silences_the_call_too():
    lines = SAME_FILE.splitlines(keepends=True)
    lines[10] = lines[10].rstrip("\n") + "  # noqa: AMP120\n"
    assert lint_source("engine.py", "".join(lines), SETTINGS).diagnostics == []


def test_the_editor_drops_the_call_s_duplicate_as_the_cli_does(tmp_path, monkeypatch):
    """The language server lints one buffer at a time: the call's report (softmax.py) must drop
    because engine.py reports the clip, as in `amplint .`; with the clip silenced by a
    `# noqa` in engine.py's unsaved buffer, softmax.py stays silent too."""
    pytest.importorskip("pygls")
    from amplint.cli.server.analysis import ProjectState
    from amplint.workspace.config import Config

    root = _copy(tmp_path)
    monkeypatch.chdir(root)
    state = ProjectState(str(root), Config(), SETTINGS, None, jobs=1)
    state.first_pass({})

    def amp120(rel, text=None):
        text = (root / rel).read_text(encoding="utf-8") if text is None else text
        return [(rel, d.line) for d in state.lint(str(root / rel), text)[0].diagnostics if d.code == "AMP120"]

    assert amp120(SOFTMAX) + amp120(ENGINE) == [(ENGINE, CLIP[1])]
    assert cli_findings(str(root), "--no-cache", "--jobs", "1", codes=("AMP120",)) == [CLIP]
    engine = (root / ENGINE).read_text(encoding="utf-8").splitlines(keepends=True)
    engine[CLIP[1] - 1] = engine[CLIP[1] - 1].rstrip("\n") + "  # noqa: AMP120\n"
    state.refresh({str(root / ENGINE): "".join(engine)})
    assert amp120(SOFTMAX) == []


def test_the_editor_lints_the_other_file_once_per_text(tmp_path, monkeypatch):
    """Each keystroke in softmax.py lints it again; engine.py, whose report decides the drop,
    is linted once for its text until the next project pass."""
    pytest.importorskip("pygls")
    import amplint.cli.server.analysis as analysis
    from amplint.cli.server.analysis import ProjectState
    from amplint.workspace.config import Config

    root = _copy(tmp_path)
    monkeypatch.chdir(root)
    state = ProjectState(str(root), Config(), SETTINGS, None, jobs=1)
    state.first_pass({})
    linted = []
    real = analysis.lint_source
    monkeypatch.setattr(analysis, "lint_source",
                        lambda path, *a, **k: linted.append(path) or real(path, *a, **k))
    text = (root / SOFTMAX).read_text(encoding="utf-8")
    for edit in range(3):
        found = state.lint(str(root / SOFTMAX), text + "\n" * edit)[0].diagnostics
        assert [d for d in found if d.code == "AMP120"] == []
    assert sorted(linted) == [ENGINE] + [SOFTMAX] * 3
