"""A call to an imported name that can only end in a file without a callee word (a dead end,
scaler_resolution._dead_end) is proven so once for every importer of one folder: the modules
the reference may name depend on the importer's folder alone, so the second caller of a
folder reuses the first's answer, and the answers (entries, findings) are the pass's without
the test.

The project, written here, is shaped like facebookresearch/detectron2's tools/: train_net.py
and plain_train_net.py each build the model (`d2x.modeling.build.build_model`, a file with no
protocol word: a dead end), scale the loss, then call the clipping helper of
d2x/solver/clip.py between the scaled backward and the step: AMP120 in both (the gradients are
still scaled). Twin: both unscale before the helper: silent.
"""

from __future__ import annotations

from collections import Counter

from project_files import code_findings

BUILD = """def build_model(cfg):
    return cfg.model
"""

CLIP = """import torch


def clip_grads(model, max_norm):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
"""

TRAIN = """import torch

from d2x.modeling.build import build_model
from d2x.solver.clip import clip_grads


def do_train(cfg, loader):
    model = build_model(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for data in loader:
        with torch.autocast("cuda"):
            loss = model(data)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        clip_grads(model, 1.0)
        scaler.step(optimizer)
        scaler.update()
"""

SCALED = "        scaler.scale(loss).backward()\n"
UNSCALED = SCALED + "        scaler.unscale_(optimizer)\n"
BUILD_PATH = "d2x/modeling/build.py"  # the first module `d2x.modeling.build.build_model` may name


def _files(train=TRAIN):
    return {"d2x/__init__.py": "", "d2x/modeling/__init__.py": "", BUILD_PATH: BUILD,
            "d2x/solver/__init__.py": "", "d2x/solver/clip.py": CLIP,
            "tools/train_net.py": train, "tools/plain_train_net.py": train.replace("do_train", "main")}


def _entries(files, may_hold: bool, proven=None):
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import build
    from amplint.analysis.project.scaler_resolution import scaler_entries, text_may_hold
    from amplint.analysis.project.scaler_summaries import local_summaries

    return scaler_entries(build(files, Settings.default()), sorted(files),
                          lambda wanted, force: local_summaries(files, wanted, force),
                          may_hold=text_may_hold(files) if may_hold else None)


def _proving(monkeypatch):
    """How often the dead-end test reads each candidate module (`light_file`)."""
    from amplint.analysis.project import scaler_resolution

    read: Counter = Counter()
    inner = scaler_resolution.light_file

    def counted(path, text):
        read[path] += 1
        return inner(path, text)
    monkeypatch.setattr(scaler_resolution, "light_file", counted)
    return read


def test_a_dead_end_is_proven_once_for_the_callers_of_one_folder(monkeypatch):
    proven = _proving(monkeypatch)
    found = _entries(_files(), True)
    assert proven[BUILD_PATH] == 1  # start: read at each dead-end test (4)
    assert found == _entries(_files(), False)  # the entries of the pass that proves none
    assert sorted(found) == ["tools/plain_train_net.py", "tools/train_net.py"]
    assert all(e.callee.endswith(": clip_grads") for entries in found.values() for e in entries)
    assert code_findings(_files(), "AMP120")[0] == [
        ("plain_train_net.py", 16, "AMP120"), ("train_net.py", 16, "AMP120")]


def test_twin_unscaled_before_the_helper_is_silent_and_proven_once(monkeypatch):
    files = _files(TRAIN.replace(SCALED, UNSCALED))
    proven = _proving(monkeypatch)
    found = _entries(files, True)
    assert proven[BUILD_PATH] == 1
    assert found == _entries(files, False)
    assert code_findings(files, "AMP120")[0] == []


def test_importers_of_two_folders_prove_it_each(monkeypatch):
    files = _files()
    files["scripts/train_net.py"] = files.pop("tools/plain_train_net.py")
    proven = _proving(monkeypatch)
    assert _entries(files, True) == _entries(files, False)
    assert proven[BUILD_PATH] == 2  # once per folder (start: 4): the candidates may differ by folder


def test_a_module_of_one_file_is_named_without_comparing_paths(monkeypatch):
    """`_module_candidates` picks the file closest to the importer among a module's files:
    the dead-end test asks it for every candidate, and a module has one file nearly always."""
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import build, resolve

    project = build(_files(), Settings.default())
    compared: list = []
    inner = resolve.os.path.commonpath

    def counted(paths):
        compared.append(paths)
        return inner(paths)
    monkeypatch.setattr(resolve.os.path, "commonpath", counted)
    assert list(project._module_candidates("tools/train_net.py", "d2x.modeling.build.build_model")) == [
        (BUILD_PATH, ("build_model",)), ("d2x/modeling/__init__.py", ("build", "build_model")),
        ("d2x/__init__.py", ("modeling", "build", "build_model"))]
    monkeypatch.undo()
    assert compared == []  # start: 3 comparisons, one per module of one file
