"""The GradScaler protocol through a closure bound once at module level and called in a
function of the script (returned_closures `factory_call`/`_global_scope`; the factory call's
module-level arguments name the caller's objects where it does not shadow them, scaler_protocol
`_Renamer._same_object`).

tests/projects/scaler_cifar_global_closure: kuangliu/pytorch-cifar layout (main.py, models/,
utils.py) with AMP added the way forks do it: `train_step = make_train_step(net, criterion,
optimizer, scaler)` at module level (utils.py's closure scales, backpropagates and steps),
`train(epoch)` calls it per batch, and the script calls `finish_step(scaler, scheduler)` (the
scaler's update) once per epoch: the second batch's step raises (AMP121 at the call).

Twins: the update runs per batch; the global is bound twice (which closure runs is not known);
a local of `train` named like the factory call's argument is another object.
"""

from __future__ import annotations

from project_files import code_findings, load

from amplint.analysis.engine import Settings, lint_source

NAME = "scaler_cifar_global_closure"
CALL = ("main.py", 38, "AMP121")


def amp121(files):
    return code_findings(files, "AMP121")


def test_global_closure_steps_every_batch_but_updates_once_per_epoch():
    found, results = amp121(load(NAME))
    assert found == [CALL]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP121")
    assert "`scaler.update()` (utils.py:22, through the call at line 39) only after the loop" in message


def test_twin_update_per_batch_is_silent():
    files = load(NAME, (
        ("        train_loss += loss.item()\n", "        train_loss += loss.item()\n        finish_step(scaler)\n"),
        ("    finish_step(scaler, scheduler)\n", "    scheduler.step()\n"),
    ))
    assert amp121(files)[0] == []


def test_twin_global_bound_twice_is_not_guessed():
    files = load(NAME, (("\n\ndef train(epoch):\n",
                         "\nif args.lr > 1:\n    train_step = make_train_step(net, criterion, optimizer, scaler)\n"
                         "\n\ndef train(epoch):\n"),))
    assert amp121(files)[0] == []


ONE_FILE = '''
import torch


def make_train_step(net, optimizer, scaler):
    def train_step(inputs):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = net(inputs).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    return train_step


net = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
train_step = make_train_step(net, optimizer, scaler)


def train(loader):
    for inputs in loader:
        train_step(inputs)


for epoch in range(10):
    train(torch.load("data.pt"))
    scaler.update()
'''


def _one_file(source):
    return [(d.line, d.code) for d in lint_source("main.py", source, Settings.default()).diagnostics
            if d.code.startswith("AMP12")]


def test_one_file_global_closure():
    assert _one_file(ONE_FILE) == [(26, "AMP121")]


def test_one_file_a_local_shadowing_the_argument_is_another_object():
    """`train`'s own `scaler` is not the module's one the closure steps: the module's scaler
    is still stepped per batch and updated per epoch (and the local is never stepped)."""
    source = ONE_FILE.replace("    for inputs in loader:\n",
                              "    scaler = torch.amp.GradScaler(\"cuda\")\n    for inputs in loader:\n")
    assert _one_file(source) == [(27, "AMP121")]
