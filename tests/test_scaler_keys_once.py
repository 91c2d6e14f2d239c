"""The GradScaler protocol's project side reads a callee file's `protocol_keys` (scaler_quiet.py)
at most once a pass, whichever of its three tests asks first (the held methods, the value calls'
EventMethods, the quiet callee files: scaler_methods.KnownKeys), and a name's test stops at the
first file that may give the method events. The nested defs of a text are found from the
literal `def` (scaler_methods.method_defs), the same names METHOD_DEF's line-led pattern finds.

The project, written here, is shaped like open-mmlab/mmengine: optim/amp_optimizer_wrapper.py's
`AmpOptimWrapper` holds the GradScaler (`backward` scales, `step` steps and updates it); the
runner's `train_step` calls it through the attribute it holds (`self.optim_wrapper.backward`),
a plain loop through a local instance, and both clip between them: AMP120 (the gradients are
still scaled). Twin: the wrapper's `backward` unscales after the scaled backward: silent.
"""

from __future__ import annotations

import random
from collections import Counter

from project_files import code_findings

WRAPPER = """import torch


class AmpOptimWrapper:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.loss_scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self.loss_scaler.scale(loss).backward()

    def step(self):
        self.loss_scaler.step(self.optimizer)
        self.loss_scaler.update()
"""

RUNNER = """import torch

from mmx.optim.amp_optimizer_wrapper import AmpOptimWrapper


class Runner:
    def __init__(self, model, optimizer):
        self.model = model
        self.optim_wrapper = AmpOptimWrapper(optimizer)

    def train_step(self, data):
        loss = self.model(data)
        self.optim_wrapper.backward(loss)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optim_wrapper.step()

    def save_checkpoint(self):
        return {"loss_scaler": self.optim_wrapper.loss_scaler.state_dict()}


def train(model, optimizer, loader):
    wrapper = AmpOptimWrapper(optimizer)
    for data in loader:
        loss = model(data)
        wrapper.backward(loss)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        wrapper.step()
"""

SCALED_BACKWARD = "        self.loss_scaler.scale(loss).backward()\n"
UNSCALED = SCALED_BACKWARD + "        self.loss_scaler.unscale_(self.optimizer)\n"
WRAPPER_PATH = "mmx/optim/amp_optimizer_wrapper.py"


def _files(wrapper=WRAPPER):
    return {WRAPPER_PATH: wrapper, "mmx/runner/runner.py": RUNNER, "mmx/__init__.py": "",
            "mmx/optim/__init__.py": "", "mmx/runner/__init__.py": ""}


def _entries(files, count_reads: bool):
    """(the protocol entries of the project, how often each file's keys were read)."""
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import build
    from amplint.analysis.project.scaler_resolution import scaler_entries, text_keys_of, text_may_hold
    from amplint.analysis.project.scaler_summaries import local_summaries

    reads: Counter = Counter()
    keys = text_keys_of(files)

    def keys_of(paths):
        reads.update(paths)
        return keys(paths)

    found = scaler_entries(build(files, Settings.default()), sorted(files),
                           lambda wanted, force: local_summaries(files, wanted, force),
                           may_hold=text_may_hold(files), keys_of=keys_of if count_reads else None)
    return found, reads


def test_the_wrapper_keys_are_read_once_for_its_three_tests():
    found, reads = _entries(_files(), True)
    # the held `optim_wrapper.backward`, the value `wrapper.backward` and the quiet-file test
    # all ask for the wrapper's keys (start: 3 reads)
    assert reads == Counter({WRAPPER_PATH: 1})
    assert found == _entries(_files(), False)[0]  # the entries of the pass without the test
    assert sorted(e.callee.split(": ")[1] for e in found["mmx/runner/runner.py"]) == [
        "AmpOptimWrapper.backward", "AmpOptimWrapper.backward", "AmpOptimWrapper.step"]
    assert code_findings(_files(), "AMP120")[0] == [("runner/runner.py", 14, "AMP120")]


def test_twin_unscaled_in_the_wrapper_is_silent_and_read_once():
    files = _files(WRAPPER.replace(SCALED_BACKWARD, UNSCALED))
    found, reads = _entries(files, True)
    assert reads == Counter({WRAPPER_PATH: 1})
    assert found == _entries(files, False)[0]
    assert code_findings(files, "AMP120")[0] == []


class _Project:
    def __init__(self, files):
        self.files = files
        self.python = sorted(files)


class _Summary:
    def __init__(self, calls):
        self.calls = calls


# two scaler helpers defining `step` (both speak of a scaler): the first may give it events
_HELPERS = {
    "a_amp.py": "class AmpStep:\n    def step(self, opt):\n        self.scaler.step(opt)\n",
    "b_ema.py": "class EmaScaler:\n    def step(self, model):\n        self.decay = 0.9\n",
}


def _counting(reads):
    from amplint.analysis.project.scaler_quiet import protocol_keys

    def keys_of(paths):
        reads.extend(paths)
        return {path: protocol_keys(_HELPERS[path]) for path in paths}
    return keys_of


def test_a_held_name_is_decided_at_its_first_file_that_may_give_it_events():
    from amplint.analysis.project.scaler_methods import held_methods

    reads: list = []
    summary = _Summary([("Trainer.fit", "self.amp.step", 0, "held", "amp.step", "")])
    assert held_methods(_Project(_HELPERS), [summary], _counting(reads)) == {"step"}
    assert reads == ["a_amp.py"]  # start: both files


def test_a_value_name_is_decided_at_its_first_file_that_may_give_it_events():
    from amplint.analysis.project.scaler_methods import EventMethods

    reads: list = []
    events = EventMethods(_Project(_HELPERS), {}, _counting(reads))
    assert events.may_have_events("step")
    assert reads == ["a_amp.py"]  # start: both files


def test_method_defs_are_what_the_line_led_pattern_finds():
    from amplint.analysis.project.scaler_methods import METHOD_DEF, method_defs

    pieces = ["def", "def ", " ", "\t", "async ", "async", "\n", "\r\n", "x", "f_1", "undef", "(",
              "#", "  def g", "\u00e9t\u00e9", "class C:", ":", "define"]
    rng = random.Random(7)
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert method_defs(text) == set(METHOD_DEF.findall(text)), repr(text)
    for text in (RUNNER, WRAPPER, "  def a(): pass\n\tasync  def b():\n def c\n", "    undef d\n"):
        assert method_defs(text) == set(METHOD_DEF.findall(text))
