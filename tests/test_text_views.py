"""The project pass reads each file's text once per reading (issue 26's cost line,
project/text_views.py): one CodeText view per text, shared by the class flow's call-site search
(site_files.py), the return kinds (return_kinds.py) and the chosen builders (chosen_builders.py),
and one scan of the names it calls, shared by the five readers of the imported-function entries.
The readings are functions of the text alone: the findings stay the same.

The project is chosen_loss_slowfast (shaped like facebookresearch/SlowFast: a training loop under
float16 autocast calling a head whose loss a string picks through an imported builder), with its
clean twin; on base its training script was viewed three times and scanned twice."""

from __future__ import annotations

import collections
import sys

import pytest

import amplint.analysis.project.site_text as site_text
from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings


class _CountedPattern:
    """A compiled pattern whose `findall` calls are counted per text."""

    def __init__(self, pattern, counts) -> None:
        self._pattern = pattern
        self._counts = counts

    def findall(self, text, *args):
        self._counts[text] += 1
        return self._pattern.findall(text, *args)

    def __getattr__(self, name):
        return getattr(self._pattern, name)


@pytest.fixture
def readings(monkeypatch):
    """(CodeText views made per text, called-name scans per text)."""
    views: collections.Counter = collections.Counter()
    scans: collections.Counter = collections.Counter()
    inner = site_text.CodeText.__init__

    def counted(self, text):
        views[text] += 1
        inner(self, text)

    monkeypatch.setattr(site_text.CodeText, "__init__", counted)
    # the pattern called_names scans with (each text counted backwards, as it is read)
    views_module = sys.modules["amplint.analysis.project.text_views"]
    name = "_CALLED_BACKWARDS" if hasattr(views_module, "_CALLED_BACKWARDS") else "CALLED"
    pattern = getattr(views_module, name)
    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "") or "").startswith("amplint.") \
                and module.__dict__.get(name) is pattern:
            monkeypatch.setattr(module, name, _CountedPattern(pattern, scans))
    return views, scans


@pytest.mark.parametrize("name, expected", [
    ("chosen_loss_slowfast", [("slowfast/models/head.py", 28, "AMP102")]),
    ("chosen_loss_slowfast_clean", []),
])
def test_each_text_is_viewed_and_scanned_once_per_pass(readings, name, expected):
    views, scans = readings
    found = project_findings(lint_project(load(name), Settings.default()))
    assert [f for f in found if f[2] == "AMP102"] == expected
    assert views and max(views.values()) == 1
    assert scans and max(scans.values()) == 1
