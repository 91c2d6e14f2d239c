"""The class flow's parse budget, frozen (flowindex.FlowIndex.freeze): once the budget is spent,
an optional read (a file a call-site search found) takes the same files whether or not an
earlier question summarised one of them in passing (resolving a reference summarises any file,
without the budget). The pass's scaler questions (r23-cost-scaler) are asked after the build,
when the mixed tree's budget is spent: a frozen budget lets a pass leave one out without moving
another's answer through the parses.

Files laid out like Lightning-AI/lightning: a call-site search of `connect(` finds the
accelerator connector, the fabric connector and the trainer; the budget (1 here) reads the
first; the trainer's `precision.py` import is what another question resolves. The clean twin is
the same order of questions on an unfrozen budget: there the earlier question decides."""

from __future__ import annotations

import types

from amplint.analysis.project import flowindex

CONNECTOR = "lightning/pytorch/trainer/connectors/accelerator_connector.py"
FABRIC = "lightning/fabric/connector.py"
TRAINER = "lightning/pytorch/trainer/trainer.py"


class _Project:
    """What FlowIndex reads of a project: summaries made on demand, none deferred."""

    def __init__(self) -> None:
        self.summaries = {}
        self.reexport_read = set()
        self.python = [FABRIC, CONNECTOR, TRAINER]
        self.files = {path: "strategy.connect(precision_plugin)\n" for path in self.python}

    def summary(self, path):
        if path not in self.summaries:
            self.summaries[path] = types.SimpleNamespace(flow=f"flow facts of {path}")
        return self.summaries[path]

    def is_deferred(self, path) -> bool:
        return False


def _reads(monkeypatch, frozen: bool, resolved_first: bool):
    """What the optional reads of the search's files give after the budget is spent, with or
    without an earlier question that summarised the trainer in passing."""
    monkeypatch.setattr(flowindex, "_ON_DEMAND_PARSES", 1)
    index = flowindex.FlowIndex(_Project())
    assert index._flow(CONNECTOR, optional=True) is not None  # the budget's one parse
    if frozen:
        index.freeze()
    if resolved_first:
        index.p.summary(TRAINER)  # `from .precision import Precision` resolved by another question
    return [index._flow(path, optional=True) for path in (FABRIC, CONNECTOR, TRAINER)]


def test_a_frozen_budget_reads_the_same_files_whatever_was_asked_before(monkeypatch):
    # the twin, unfrozen: the earlier question decides whether the trainer is read
    assert _reads(monkeypatch, frozen=False, resolved_first=False) == [None, f"flow facts of {CONNECTOR}", None]
    assert _reads(monkeypatch, frozen=False, resolved_first=True)[2] == f"flow facts of {TRAINER}"
    alone = _reads(monkeypatch, frozen=True, resolved_first=False)
    after = _reads(monkeypatch, frozen=True, resolved_first=True)
    assert alone == after == [None, f"flow facts of {CONNECTOR}", None]


def test_a_frozen_budget_still_counts_its_parses(monkeypatch):
    monkeypatch.setattr(flowindex, "_ON_DEMAND_PARSES", 2)
    index = flowindex.FlowIndex(_Project())
    index.freeze()  # before the budget is spent: the files it counts from now on are read again
    assert index._flow(FABRIC, optional=True) is not None
    assert index._flow(FABRIC, optional=True) is not None and index._parses == 1
    assert index._flow(CONNECTOR, optional=True) is not None and index._parses == 2
    assert index._flow(TRAINER, optional=True) is None and TRAINER in index.skipped
