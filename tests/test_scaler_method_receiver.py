"""The GradScaler protocol through a method called on an instance: the method's `self` is the
object the call names (scaler_protocol `_Renamer.receiver`; across files, the summaries'
"value" calls `x.m()` resolved by the class flow, scaler_resolution `_value_target`).

tests/projects/scaler_transformer_scheduled_optim: jadore801120/attention-is-all-you-need-pytorch
layout (transformer/Optim.py `ScheduledOptim`, transformer/Models.py, train.py `train_epoch`/`main`)
with AMP added to train.py: the loss is scaled, then `optimizer.step_and_update_lr()` steps the
wrapped Adam directly (`self._optimizer.step()`), so the update is the loss scale times too
large (AMP127 at the call, naming `optimizer._optimizer`).

Twins: the wrapper steps through the scaler it is handed; the optimizer may be one of two
wrapper classes (which `step_and_update_lr` runs is not known); a class-level call binds no
`self` to its receiver.
"""

from __future__ import annotations

from project_files import code_findings, load

from amplint.analysis.engine import Settings, lint_source

NAME = "scaler_transformer_scheduled_optim"
CALL = ("train.py", 23, "AMP127")
INNER_STEP = "        self._optimizer.step()\n"


def amp(files, code="AMP127"):
    return code_findings(files, code)[0]


def test_wrapper_method_steps_the_inner_optimizer_past_the_scaler():
    found, results = code_findings(load(NAME), "AMP127")
    assert found == [CALL]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP127")
    assert "`optimizer._optimizer.step()` (at transformer/Optim.py:17, through this call)" in message
    assert "use `scaler.step(optimizer._optimizer)`" in message


def test_twin_wrapper_steps_through_the_scaler_it_is_handed_is_silent():
    files = load(NAME, (
        ("    def step_and_update_lr(self):\n", "    def step_and_update_lr(self, scaler):\n"),
        (INNER_STEP, "        scaler.step(self._optimizer)\n        scaler.update()\n"),
        ("        optimizer.step_and_update_lr()\n", "        optimizer.step_and_update_lr(scaler)\n"),
    ))
    assert amp(files) == []
    assert amp(files, "AMP121") == []


def test_wrapper_steps_through_the_scaler_but_never_updates():
    files = load(NAME, (
        ("    def step_and_update_lr(self):\n", "    def step_and_update_lr(self, scaler):\n"),
        (INNER_STEP, "        scaler.step(self._optimizer)\n"),
        ("        optimizer.step_and_update_lr()\n", "        optimizer.step_and_update_lr(scaler)\n"),
    ))
    assert amp(files) == []
    assert amp(files, "AMP121") == [("train.py", 23, "AMP121")]


def test_twin_one_of_two_wrapper_classes_is_not_guessed():
    files = load(NAME, (
        ("class ScheduledOptim():\n",
         "class ConstantOptim():\n"
         "    def __init__(self, optimizer):\n"
         "        self._optimizer = optimizer\n\n"
         "    def step_and_update_lr(self):\n"
         "        pass\n\n"
         "    def zero_grad(self):\n"
         "        self._optimizer.zero_grad()\n\n\n"
         "class ScheduledOptim():\n"),
        ("from transformer.Optim import ScheduledOptim\n",
         "from transformer.Optim import ConstantOptim, ScheduledOptim\n"),
        ("    scaler = torch.amp.GradScaler('cuda', enabled=opt.amp)\n",
         "    if opt.n_warmup_steps == 0:\n"
         "        optimizer = ConstantOptim(optim.Adam(transformer.parameters()))\n"
         "    scaler = torch.amp.GradScaler('cuda', enabled=opt.amp)\n"),
    ))
    assert amp(files) == []


ONE_FILE = '''
import torch


class ScheduledOptim:
    def __init__(self, optimizer):
        self._optimizer = optimizer

    def step_and_update_lr(self):
        self._optimizer.step()


def train_epoch(model, data, optimizer, scaler):
    for x in data:
        with torch.autocast("cuda"):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        optimizer.step_and_update_lr()


def main(model, data):
    optimizer = ScheduledOptim(torch.optim.Adam(model.parameters()))
    train_epoch(model, data, optimizer, torch.amp.GradScaler("cuda"))
'''


def _one_file(source):
    return [(d.line, d.code) for d in lint_source("train.py", source, Settings.default()).diagnostics
            if d.code.startswith("AMP12")]


def test_one_file_method_on_a_parameter_binds_self_to_it():
    assert _one_file(ONE_FILE) == [(18, "AMP127")]


def test_one_file_class_level_call_binds_no_self():
    source = ONE_FILE.replace("        optimizer.step_and_update_lr()\n",
                              "        ScheduledOptim.step_and_update_lr(optimizer)\n")
    assert _one_file(source) == []
