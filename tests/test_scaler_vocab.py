"""The framework vocabularies of the scaler protocol (amplint/analysis/data/scaler_vocab.py): each entry
cites a line of the framework's own code, checked against the installed package when that
release is installed (skipped otherwise), and calls match an entry only on a receiver and
import that say it is that framework's."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os

import libcst as cst
import pytest

from amplint.analysis.data.scaler_vocab import BY_METHOD, VERBS
from amplint.analysis.facts.framework_verbs import events_of, verb_of

KNOWN_EVENTS = {"backward", "unscale", "unscale_all", "clip", "step_update", "region"}


def test_every_entry_names_known_events_and_a_line():
    assert {v.framework for v in VERBS} == {
        "accelerate", "mmengine", "lightning", "deepspeed", "fairseq"}
    for verb in VERBS:
        assert set(verb.events) <= KNOWN_EVENTS, verb
        assert verb.path.startswith(verb.module + "/") and verb.path.endswith(".py"), verb
        assert verb.line > 0 and verb.code.strip(), verb
        assert verb.release.split()[0] == verb.module


def _installed_file(verb):
    spec = importlib.util.find_spec(verb.module)
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        version = importlib.metadata.version(verb.module)
    except importlib.metadata.PackageNotFoundError:
        return None
    if verb.release.split()[1] != version:
        return None
    parent = os.path.dirname(list(spec.submodule_search_locations)[0])
    return os.path.join(parent, verb.path)


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: f"{v.framework}.{v.method}")
def test_the_cited_line_holds_the_cited_code(verb):
    path = _installed_file(verb)
    if path is None or not os.path.exists(path):
        pytest.skip(f"{verb.release} is not installed")
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    assert verb.code in lines[verb.line - 1]


def _call(text):
    return cst.parse_expression(text)


def test_a_framework_call_matches_on_receiver_and_import():
    acc = {"accelerate"}
    assert verb_of(_call("accelerator.clip_grad_norm_(params, 1.0)"), acc).method == (
        "clip_grad_norm_")
    assert verb_of(_call("self.accelerator.clip_grad_value_(params, 1.0)"), acc) is not None
    # no import of accelerate: a generic method name is not accelerate's
    assert verb_of(_call("accelerator.clip_grad_norm_(params, 1.0)"), set()) is None
    # a distinctive method needs no import
    assert verb_of(_call("accelerator.unscale_gradients(opt)"), set()) is not None
    # another receiver, or the framework's own `self`
    assert verb_of(_call("trainer.clip_grad_norm_(params, 1.0)"), acc) is None
    assert verb_of(_call("self.clip_grad_norm_(params, 1.0)"), acc) is None
    # Lightning's methods of the module itself are called on `self`
    assert verb_of(_call("self.manual_backward(loss)"), set()).framework == "lightning"
    assert verb_of(_call("ema.update_params(model)"), {"mmengine"}) is None
    assert verb_of(_call("optim_wrapper.update_params(loss)"), set()).framework == "mmengine"


def test_flow_events_of_accelerate_calls():
    module = cst.parse_module("")
    acc = {"accelerate"}
    assert [(k, a) for k, a, _ in events_of(
        _call("accelerator.unscale_gradients(optimizer=opt_g)"), acc, module)] == [
        ("unscale", "opt_g")]
    assert [(k, a) for k, a, _ in events_of(
        _call("accelerator.unscale_gradients()"), acc, module)] == [("unscale", None)]
    assert [(k, a) for k, a, _ in events_of(
        _call("accelerator.clip_grad_norm_(model.parameters(), 1.0)"), acc, module)] == [
        ("unscale", None)]
    # fairseq's unscale is idempotent: no unscale event, so no double unscale
    assert events_of(_call("optimizer.clip_grad_norm(1.0)"), {"fairseq"}, module) == []
    assert "step" in BY_METHOD


def test_pytorch_lightning_import_names_lightning():
    from amplint.analysis.facts.framework_verbs import imported
    from amplint.analysis.facts.tree import Collector

    tree = Collector(cst.parse_module("import pytorch_lightning as pl\n"))
    assert "lightning" in imported(tree)
