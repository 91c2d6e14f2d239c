"""The class flow's registry search (registries.Registries.made_by) reads the registrations of
the files whose text may register into the registry a build asks about, as mmdetection 2.x
registers its heads, losses and necks (`@HEADS.register_module()` in most of mmdet/models):
those not summarised yet are read without a summary (ast_registrations.py) and summarised only
when something reads them further. Counted in files summarised, not in time; the answer is the
one a search that summarises every file gives."""

from __future__ import annotations

import os

from project_files import PROJECTS, load

from amplint.analysis.project import build, parse_or_none
from amplint.analysis.project.ast_registrations import ast_registrations
from amplint.analysis.project.summary import summarize

LOSS = '''import torch
from torch import nn

from ..builder import LOSSES


@LOSSES.register_module()
class ExtraLoss{k}(nn.Module):
    def forward(self, scores, labels):
        return torch.sigmoid(scores).mean() - labels.mean()
'''


def _run(files, light=True):
    """(entries of every file, files summarised on demand, the (file, class) the builds made)."""
    asked = []

    def many(paths):
        asked.extend(paths)
        return {path: summarize(path, files[path], parse_or_none(files[path])) for path in paths}

    kwargs = {} if light else {"registrations_many": lambda paths: {path: None for path in paths}}
    project = build(files, summarize_many=many, **kwargs)
    entries = {path: project.entries_for(path) for path in files}
    made = {found for made in project.flow.registries._made.values() for found in made}
    return entries, asked, made


def _with_losses(count):
    files = load("reach_mmcv_fp16")
    for k in range(count):
        files[f"reach_mmcv_fp16/detlite/models/losses/extra_{k}.py"] = LOSS.format(k=k)
    return files


def test_unbuilt_registrations_are_read_without_summaries():
    files = load("reach_mmcv_fp16")
    entries, asked, registered = _run(files)
    assert any(entries.values())  # the fp16 head's region reaches into the head
    head = "reach_mmcv_fp16/detlite/models/heads/attn_head.py"
    assert (head, "AttnHead") in registered  # the build of HEADS made it ...
    bce = "reach_mmcv_fp16/detlite/models/losses/bce.py"
    assert bce not in asked  # ... and nothing builds the losses: not summarised
    full_entries, full_asked, full_registered = _run(files, light=False)
    assert (entries, registered) == (full_entries, full_registered)


def test_summaries_do_not_grow_with_unbuilt_registered_classes():
    counts = []
    for count in (0, 4, 16):
        files = _with_losses(count)
        entries, asked, registered = _run(files)
        full_entries, full_asked, full_registered = _run(files, light=False)
        assert (entries, registered) == (full_entries, full_registered)
        assert not any("extra_" in path for path in asked + full_asked)  # LOSSES is never built
        counts.append((len(asked), len(full_asked)))
    assert counts[0] == counts[1] == counts[2]


def test_registrations_equal_the_summary_s():
    checked = 0
    for folder, _, names in os.walk(PROJECTS):
        for name in names:
            path = os.path.join(folder, name)
            if not name.endswith(".py"):
                continue
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            found = ast_registrations(path, text)
            if found is None:
                continue
            summary = summarize(path, text, parse_or_none(text))
            assert found == list(summary.flow.registrations), path
            checked += bool(found)
    assert checked >= 10


def test_what_it_leaves_to_the_summary():
    registry = "from .builder import HEADS\n\n\n@HEADS.register_module()\nclass Head:\n    pass\n"
    assert ast_registrations("h.py", registry) == [(("ref", ".builder.HEADS"), "Head")]
    made = "from .builder import make\n\n\n@make().register_module()\nclass Head:\n    pass\n"
    assert ast_registrations("h.py", made) is None  # a registry that is not a (dotted) name
    called = "from .builder import make\n\n\nclass Head:\n    pass\n\n\nmake().register_module(module=Head)\n"
    assert ast_registrations("h.py", called) is None
    first_pass = registry + "\n\nwith torch.autocast('cuda'):\n    pass\n"  # the first pass parses it
    assert ast_registrations("h.py", first_pass) is None
    assert ast_registrations("h.py", "@HEADS.register_module(\nclass") is None  # not Python


def test_function_bodies_left_out_only_where_no_class_is_nested():
    # `tree.classes` keeps the first class of a name: here the one inside `f`, so the
    # decorated module-level `Head` is not registered (as the summary says)
    nested = ("from .builder import HEADS\n\n\ndef f():\n    class Head:\n        pass\n\n\n"
              "@HEADS.register_module()\nclass Head:\n    pass\n")
    plain = nested.replace("    class Head:\n        pass\n", "    return 1\n")
    for text in (nested, plain):
        summary = summarize("h.py", text, parse_or_none(text))
        assert ast_registrations("h.py", text) == list(summary.flow.registrations)
    assert ast_registrations("h.py", nested) == []
    assert ast_registrations("h.py", plain) == [(("ref", ".builder.HEADS"), "Head")]
