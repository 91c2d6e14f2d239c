"""A cross-file finding names the other end of its chain by path:line (issue 26): the blind sets'
labels sit on either end, and the reader of a finding at a call needs to know where the event it
is about runs.

AMP122 (a backward of an unscaled loss, then `scaler.step`) composed through a helper of another
file, on a project laid out like facebookresearch/detr (main.py, engine.py train_one_epoch,
util/misc.py helpers) in a fork that trains with a GradScaler: once the backward runs in the
helper (`misc.backward_step`, from engine.py), once the scaler's step does (`misc.optimizer_step`,
from main.py's fine-tuning loop). Each has a
clean twin (the loss scaled) that stays silent. Before, neither message named util/misc.py.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

SETTINGS = Settings.default()

MISC = '''import torch


def backward_step(losses):
    """Sum the weighted losses and run the backward."""
    loss = sum(losses.values())
    loss.backward()
    return loss


def optimizer_step(scaler, optimizer):
    """Step through the scaler and update its scale."""
    scaler.step(optimizer)
    scaler.update()
'''

ENGINE = '''import torch

import util.misc as misc


def train_one_epoch(model, criterion, data_loader, optimizer, scaler, device):
    model.train()
    for samples, targets in data_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(samples.to(device))
            losses = criterion(outputs, targets)
        optimizer.zero_grad()
        misc.backward_step(losses)
        scaler.step(optimizer)
        scaler.update()
'''

MAIN = '''import torch

import util.misc as misc
from engine import train_one_epoch


def main(args, model, criterion, data_loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(args.epochs):
        if not args.finetune:
            train_one_epoch(model, criterion, data_loader, optimizer, scaler, "cuda")
            continue
        for samples, targets in data_loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = sum(criterion(model(samples), targets).values())
            optimizer.zero_grad()
            loss.backward()
            misc.optimizer_step(scaler, optimizer)
'''


def _files(engine=ENGINE, main=MAIN, misc=MISC):
    return {"detr/main.py": main, "detr/engine.py": engine, "detr/util/__init__.py": "",
            "detr/util/misc.py": misc}


def _amp122(files):
    return sorted((path, d.line, d.message) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics if d.code == "AMP122")


def test_the_backward_and_the_step_of_another_file_are_named_by_path_and_line():
    found = _amp122(_files())
    assert [(path, line) for path, line, _ in found] == [("detr/engine.py", 13), ("detr/main.py", 18)]
    assert found[0][2].startswith(
        "backward of an unscaled loss (at util/misc.py:7, through this call), but `scaler.step` at line 14 "
        "steps the optimizer:")
    assert found[1][2].startswith(
        "backward of an unscaled loss, but `scaler.step` at util/misc.py:13, through the call at line 19, "
        "steps the optimizer:")


def test_the_twins_with_the_loss_scaled_are_silent():
    engine = ENGINE.replace("        misc.backward_step(losses)\n",
                            "        scaler.scale(sum(losses.values())).backward()\n")
    main = MAIN.replace("            loss.backward()\n", "            scaler.scale(loss).backward()\n")
    assert _amp122(_files(engine=engine, main=main)) == []
