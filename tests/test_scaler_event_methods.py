"""The GradScaler protocol's value calls (`metric_logger.update(...)` on a local instance) are
asked of the class flow only when some project method of that name may have protocol events in
the summary the call would be composed with (scaler_methods.EventMethods): a caller's first-pass
summary says it exactly, `protocol_keys` gives a superset for the other files.

The project, written here, is shaped like pytorch/vision's references/classification
(train.py's `train_one_epoch` with a GradScaler; utils.py's `MetricLogger` and a gradient
clipping helper). The clip runs on scaled gradients: AMP120 at its call. Twins: the loop
unscales first (silent); a `MetricLogger.update` that clips may give an entry, so its call is
asked.
"""

from __future__ import annotations

import amplint.analysis.project.scaler_resolution as resolution
from project_files import code_findings

TRAIN = """import torch

import utils


def train_one_epoch(model, criterion, optimizer, data_loader, device, epoch, scaler, args):
    model.train()
    metric_logger = utils.MetricLogger(delimiter="  ")
    for image, target in data_loader:
        image, target = image.to(device), target.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            output = model(image)
            loss = criterion(output, target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        if args.clip_grad_norm is not None:
            utils.clip_gradients(model, args.clip_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        metric_logger.update(loss=loss.item(), lr=optimizer.param_groups[0]["lr"])
    return metric_logger
"""

UTILS = """import torch


class MetricLogger:
    def __init__(self, delimiter="\\t"):
        self.meters = {}
        self.delimiter = delimiter

    def update(self, **kwargs):
        for name, value in kwargs.items():
            self.meters.setdefault(name, []).append(value)


def clip_gradients(model, max_norm):
    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
"""

CLIP = "            utils.clip_gradients(model, args.clip_grad_norm)\n"
UNSCALED = "            scaler.unscale_(optimizer)\n" + CLIP
UPDATE = "    def update(self, **kwargs):\n"
CLIPPING_UPDATE = UPDATE + "        torch.nn.utils.clip_grad_norm_(kwargs.get(\"params\", ()), 1.0)\n"


def _project(train=TRAIN, utils=UTILS):
    return {"cls/train.py": train, "cls/utils.py": utils}


def _asked(monkeypatch, files):
    """(the value calls the protocol asked the class flow about, the AMP120 findings)."""
    asked = []
    inner = resolution._value_target

    def spy(project, path, key, name, holder="local"):
        asked.append(name)
        return inner(project, path, key, name, holder)

    monkeypatch.setattr(resolution, "_value_target", spy)
    found, _ = code_findings(files, "AMP120")
    return asked, found


def test_a_method_call_that_can_give_no_entry_is_not_asked(monkeypatch):
    asked, found = _asked(monkeypatch, _project())
    assert "metric_logger.update" not in asked
    assert found == [("train.py", 17, "AMP120")]  # the helper is still composed


def test_twin_unscaled_first_is_silent(monkeypatch):
    asked, found = _asked(monkeypatch, _project(TRAIN.replace(CLIP, UNSCALED)))
    assert "metric_logger.update" not in asked
    assert found == []


def test_twin_a_method_with_events_is_asked(monkeypatch):
    asked, _ = _asked(monkeypatch, _project(utils=UTILS.replace(UPDATE, CLIPPING_UPDATE)))
    assert "metric_logger.update" in asked


class _Project:
    def __init__(self, files):
        self.files = files
        self.python = sorted(files)


class _Summary:
    def __init__(self, functions):
        self.functions = functions


_FILES = {
    "meters.py": "class Meter:\n    def update(self, v):\n        self.v = v\n    def clip(self):\n        pass\n",
    "ema.py": "class EMA:\n    def update(self, model):\n        model.backward()\n",
    "hooks.py": "class Hook:\n    def after_step(self):\n        clip(self)\n",
}


def test_exact_summaries_decide_before_the_keys():
    from amplint.analysis.project.scaler_methods import EventMethods

    asked = []

    def keys_of(paths):
        asked.extend(paths)
        return {path: frozenset({"Hook.after_step"}) for path in paths}

    # meters.py's summary (a caller's: exact) gives `update` no events; ema.py has none
    events = EventMethods(_Project(_FILES), {"meters.py": _Summary({"Meter.clip": ()})}, keys_of)
    assert not events.may_have_events("update")  # ema.py's keys: no `EMA.update`
    assert asked == ["ema.py"]
    assert events.may_have_events("after_step")
    assert events.may_have_events("clip")  # meters.py's exact summary: `Meter.clip` has events
    assert asked == ["ema.py", "hooks.py"]  # each file's keys read once


def test_unknown_keys_keep_the_question():
    from amplint.analysis.project.scaler_methods import EventMethods

    events = EventMethods(_Project(_FILES), {}, lambda paths: {path: None for path in paths})
    assert events.may_have_events("update")
    assert EventMethods(_Project(_FILES), {}, None).may_have_events("update")
    assert not EventMethods(_Project(_FILES), {}, None).may_have_events("missing")
