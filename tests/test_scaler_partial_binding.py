"""The GradScaler protocol through a `functools.partial`: the call runs the partial's function
with the keywords it holds (facts/partial_bindings.py), in one file and across files.

tests/projects/scaler_ijepa_partial_logger: facebookresearch/ijepa layout (main.py, src/train.py,
src/helper.py init_opt, src/utils/logging.py grad_logger, configs/*.yaml): src/train.py binds the
scaler and optimizer into `grad_logger` with `partial(...) if scaler is not None else
grad_logger`; `grad_logger` unscales through the bound scaler after train.py already unscaled
the same optimizer for clipping (AMP123 at the call). Where `scaler` is None the bare
`grad_logger` leaves it at its `None` default, and its only event needs it set: the same call.

Twins: the logger is called bare; an event of the logger runs without the tested keyword
(which function runs with which keywords is then not known); the scaler name is bound again.
"""

from __future__ import annotations

from project_files import code_findings, load

from amplint.analysis.engine import Settings, lint_source

NAME = "scaler_ijepa_partial_logger"
CHOSEN = ("    log_grads = partial(grad_logger, scaler=scaler, optimizer=optimizer) "
          "if scaler is not None else grad_logger\n")
PLAIN = "    log_grads = partial(grad_logger, scaler=scaler, optimizer=optimizer)\n"


def amp123(files):
    return code_findings(files, "AMP123")


def test_partial_chosen_when_the_scaler_is_set_unscales_again():
    found, results = amp123(load(NAME))
    assert found == [("src/train.py", 29, "AMP123")]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP123")
    assert "(`scaler.unscale_(...)` at src/utils/logging.py:17, through this call)" in message


def test_plain_partial_unscales_again():
    assert amp123(load(NAME, ((CHOSEN, PLAIN),)))[0] == [("src/train.py", 29, "AMP123")]


def test_twin_logger_called_bare_is_silent():
    assert amp123(load(NAME, ((CHOSEN, "    log_grads = grad_logger\n"),)))[0] == []


def test_twin_an_event_outside_the_tested_arm_is_not_guessed():
    files = load(NAME, (("    if scaler is not None:\n        scaler.unscale_(optimizer)\n",
                         "    scaler.unscale_(optimizer)\n"),))
    assert amp123(files)[0] == []


def test_twin_scaler_bound_again_is_not_guessed():
    files = load(NAME, ((CHOSEN, CHOSEN + "    scaler = scaler or torch.amp.GradScaler(\"cuda\")\n"),))
    assert amp123(files)[0] == []


ONE_FILE = '''
from functools import partial

import torch


def grad_logger(named_params, scaler=None, optimizer=None):
    if scaler is not None:
        scaler.unscale_(optimizer)
    return [p.grad.norm() for _, p in named_params]


def train(model, loader, optimizer, scaler):
    log_grads = partial(grad_logger, scaler=scaler, optimizer=optimizer)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        log_grads(model.named_parameters())
        scaler.step(optimizer)
        scaler.update()
'''


def _one_file(source):
    return [(d.line, d.code) for d in lint_source("train.py", source, Settings.default()).diagnostics
            if d.code.startswith("AMP12")]


def test_one_file_partial_of_a_def():
    assert _one_file(ONE_FILE) == [(21, "AMP123")]


def test_one_file_partial_of_another_optimizer_is_silent():
    source = ONE_FILE.replace("optimizer=optimizer)", "optimizer=other)").replace(
        "def train(model, loader, optimizer, scaler):", "def train(model, loader, optimizer, scaler, other):")
    assert _one_file(source) == []


def test_one_file_function_whose_only_protocol_calls_are_partials():
    """No call of the function names a scaler: it is still walked for itself (quiet_frames)."""
    source = ONE_FILE + (
        "\n\ndef log_twice(model, optimizer, scaler):\n"
        "    log_grads = partial(grad_logger, scaler=scaler, optimizer=optimizer)\n"
        "    log_grads(model.named_parameters())\n"
        "    log_grads(model.named_parameters())\n")
    assert _one_file(source) == [(21, "AMP123"), (29, "AMP123")]
