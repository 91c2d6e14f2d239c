"""The class flow's call-site search summarises only the files whose calls can reach the
callee asked about (issue 34): counted (files summarised), not timed.

A project laid out like ultralytics/yolov5: `val.py`'s `run(data, model=None)` runs the model
under autocast, `train.py` calls `validate.run(data, model=model)` with its DetectionModel. The
name `run` is also called in files that cannot call `val.run`: `detect.py` calls its own
`run(...)`, `export.py` calls `subprocess.run(...)`, `utils/downloads.py` only mentions it in
a docstring and a comment. Before, every one of them was summarised to look for call sites of
`run`; now only `train.py` is, and the finding (AMP102 in the model, reached through the call
in train.py) is the same. The clean twin (val without autocast) stays silent."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project.call_arguments import may_bind
from amplint.analysis.project.site_text import CodeText

SETTINGS = Settings.default()

YOLO = """import torch
import torch.nn as nn
import torch.nn.functional as F


class DetectionModel(nn.Module):
    def forward(self, x):
        return F.binary_cross_entropy(torch.sigmoid(x), x)
"""
VAL = """import torch


@torch.no_grad()
def run(data, model=None, half=True):
    model.eval()
    with torch.autocast("cuda"):
        preds = model(data)
    return preds
"""
VAL_CLEAN = VAL.replace('    with torch.autocast("cuda"):\n        preds = model(data)\n', "    preds = model(data)\n")
TRAIN = """import torch

import val as validate
from models.yolo import DetectionModel


def train(hyp, opt):
    model = DetectionModel()
    for epoch in range(hyp["epochs"]):
        results = validate.run(opt.data, model=model)
    return results
"""
DETECT = """import argparse

import torch

from models.yolo import DetectionModel


def run(weights="yolov5s.pt", source="data/images", half=False):
    model = DetectionModel()
    return model(torch.load(source))


def main(opt):
    run(opt.weights, opt.source)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    main(parser.parse_args())
"""
EXPORT = """import subprocess

import torch


def export_onnx(model, im, f):
    torch.onnx.export(model, im, f)
    subprocess.run(["onnxsim", f, f], check=True)
    return f
"""
DOWNLOADS = '''import os


def attempt_download(file):
    """Download `file` if missing, then run(data, weights=file) can load it."""
    # run(cmd, shell=True) was used here before
    os.system(f"curl -L {file} -o {file}")
    return file
'''


def _files(val: str = VAL):
    return {
        "yolov5/val.py": val,
        "yolov5/train.py": TRAIN,
        "yolov5/detect.py": DETECT,
        "yolov5/export.py": EXPORT,
        "yolov5/utils/downloads.py": DOWNLOADS,
        "yolov5/models/yolo.py": YOLO,
    }


def test_files_that_cannot_call_the_function_are_not_summarised():
    found = lint_project(_files(), SETTINGS)
    assert [d.code for d in found["yolov5/models/yolo.py"].diagnostics] == ["AMP102"]
    project = build(_files())
    assert "yolov5/train.py" in project.parsed  # the one call site of val.run
    spared = {"yolov5/detect.py", "yolov5/export.py", "yolov5/utils/downloads.py"}
    assert spared.isdisjoint(project.parsed), sorted(spared & set(project.parsed))


def test_clean_twin_is_silent():
    found = lint_project(_files(VAL_CLEAN), SETTINGS)
    assert not [d.code for result in found.values() for d in result.diagnostics if d.code != "AMP130"]


def test_a_local_or_an_attribute_callee_keeps_the_file():
    """`run` reached through something the text cannot follow is summarised as before."""
    files = _files()
    files["yolov5/utils/callbacks.py"] = (  # `self.run` holds what the class stores (`_stores`)
        "class Callbacks:\n    def __init__(self, run):\n        self.run = run\n\n"
        "    def fire(self, hook, data):\n        return self.run(hook, data)\n"
    )
    files["yolov5/segment/train.py"] = (
        "def fit(validate, data, model):\n    return validate.run(data, model=model)\n"
    )
    project = build(files)
    assert {"yolov5/utils/callbacks.py", "yolov5/segment/train.py"} <= set(project.parsed)


def test_code_text_blanks_comments_and_plain_strings_only():
    view = CodeText('x = "run(a)"  # run(b)\ny = f"{run(c)}"\nz = \'\'\'\nrun(d)\n\'\'\'\n')
    assert view.sure
    assert len(view.mentions("run")) == 1  # the f-string's expression is code
    assert view.code.count("\n") == 5  # lines are kept


@pytest.mark.parametrize("text", [
    'x = f"{d["k"]}" + run(y)\n',  # Python 3.12's nested quotes: where the string ends is unsure
    'x = "unterminated\n',
])
def test_code_text_that_cannot_be_read_is_not_vouched_for(text):
    assert not CodeText(text).sure


# a string body's reference reading: one alternation per character (the patterns site_text
# unrolled for speed must end every body exactly where these do, and fail where they fail)
_BODY_REFERENCE = {
    '"""': r'(?:[^"\\]|\\[\s\S]|"(?!""))*"""',
    "'''": r"(?:[^'\\]|\\[\s\S]|'(?!''))*'''",
    '"': r'(?:[^"\\\n]|\\[\s\S])*"',
    "'": r"(?:[^'\\\n]|\\[\s\S])*'",
}


def test_string_bodies_end_where_the_per_character_reading_ends():
    import itertools
    import re

    from amplint.analysis.project import code_blanking

    pieces = ['"', "'", "\\", "\n", "a", "é"]
    texts = ["".join(p) for n in range(7) for p in itertools.product(pieces, repeat=n)]
    texts += ['a\\"""b"""', 'x""""', "\\\\\\'''", 'doc \\"\\"\\" still """ end', "it\\'s ''' '"]
    for quote, reference in _BODY_REFERENCE.items():
        reference = re.compile(reference)
        for text in texts:
            for start in range(len(text) + 1):
                want = reference.match(text, start)
                got = code_blanking._BODY[quote].match(text, start)
                assert (want and want.end()) == (got and got.end()), (quote, text, start)


class _FoundText(str):
    """A text whose `find` calls are counted per character looked for."""

    def __new__(cls, text):
        made = super().__new__(cls, text)
        made.finds = {}
        return made

    def find(self, sub, *args):
        self.finds[sub] = self.finds.get(sub, 0) + 1
        return str.find(self, sub, *args)


def _blank_by_search(text):
    """code_blanking.blank_code as it read the text before: a `[#"']` search for each comment
    or string (the definition the memchr reading must agree with)."""
    import re

    from amplint.analysis.project import code_blanking as cb

    out, position = [], 0
    while True:
        match = re.compile(r"[#\"']").search(text, position)
        if match is None:
            out.append(text[position:])
            break
        start = match.start()
        if match.group(0) == "#":
            out.append(text[position:start])
            end = text.find("\n", start)
            position = len(text) if end < 0 else end
            continue
        first = start
        while first > start - 2 and first > 0 and text[first - 1] in cb._PREFIX:
            first -= 1
        if first < start and first > 0 and cb._WORD.match(text, first - 1):
            first = start
        prefix = text[first:start]
        quote = text[start:start + 3]
        if quote not in ('"""', "'''"):
            quote = text[start]
        body = cb._BODY[quote].match(text, start + len(quote))
        if body is None:
            return text, False
        end = body.end()
        out.append(text[position:first])
        if "f" in prefix.lower() or "t" in prefix.lower():
            if not cb._balanced(text[start + len(quote):end - len(quote)]):
                return text, False
            out.append(text[first:end])
        else:
            out.append(quote[0] + "\n" * text.count("\n", start, end) + quote[0])
        position = end
    return "".join(out), True


def test_comments_and_strings_are_found_by_memchr_as_the_search_found_them():
    """blank_code finds where each comment or string may start with `str.find`, each of `#`,
    `"`, `'` looked for again only after the reading passes it (on start: a regex search per
    comment or string, no `find` of a quote: fails), and blanks as that search did: on
    generated texts (detectron2-shaped `# comment`, docstrings, `f"{x!r}"`, `rb'..'`, names
    ending in a prefix letter, unterminated strings) and on this repository's own modules."""
    import random

    from amplint.analysis.project.code_blanking import blank_code
    from project_files import own_package_texts

    pieces = ["#", "# c\n", '"', "'", '"""', "'''", "f", "rb", "x", "\\", "\n", "{", "}", "a = ", "é", " "]
    rng = random.Random(27)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 14))) for _ in range(30000)]
    texts += own_package_texts()
    for text in texts:
        assert blank_code(text) == _blank_by_search(text), text
    text = _FoundText('x = "a"  # one\ny = \'b\' + "c"\n# two\n')
    assert blank_code(text) == ('x = ""  \ny = \'\' + ""\n\n', True)
    # each looked for at most once per occurrence, and once more to find none left
    assert all(0 < text.finds[char] <= text.count(char) + 1 for char in "#\"'"), text.finds


@pytest.mark.parametrize("text, imports, unknown", [
    ("import c.nn\n", [("c", True)], False),
    ("import a.b as c\n", [("a.b", True)], False),
    ("from .x import (\n    y as c,\n)\n", [(".x.y", True)], False),
    ("try:\n    import c\nexcept ImportError:\n    c = None\n", [("c", False)], True),
    ("import c\n\ndef f(c):\n    return c.x\n", [("c", True)], True),
    ("import c\nfor c in range(3):\n    pass\n", [("c", True)], True),
])
def test_bindings_of_a_name(text, imports, unknown):
    binding = CodeText(text).binding("c")
    assert binding.imports == imports
    assert binding.unknown is unknown


@pytest.mark.parametrize("args, binds", [
    ('""', False), ('"", device_map=""', False), ("1, None", False),  # strings come blanked
    ("model", True), ("cfg.model", True), ("*args, model", False), ("name=model", True),
])
def test_which_arguments_can_bind(args, binds):
    assert may_bind(args) is binds


def test_a_self_method_callee_holds_its_class_s_or_a_base_s_method_and_its_file_is_kept():
    """What site_files' `self.m(...)` rule (`_stored_anywhere`, `_asks_method`) relies on: with
    no store of `m`, the class flow reads `self.m` as a method `m` of the enclosing class or of
    one of its project bases (round 49, BasicSR's inherited `model_to_device`), never anything
    else. So a subclass's file calling `self.m(...)` is kept for a question about a class's
    method `m`, and spared for any other question (r14-registry's nnUNet `self._build_loss()`
    for a question about a function `_build_loss`)."""
    from amplint.analysis.project import build
    from amplint.analysis.project.site_files import SiteFiles

    project = build({
        "pkg/a.py": "class A:\n    def helper(self, x):\n        return x\n\n"
                    "    def run(self, m):\n        return self.helper(m)\n",
        "pkg/b.py": "from pkg.a import A\n\nclass B(A):\n    def go(self, m):\n"
                    "        return self.helper(m)\n",
        "pkg/c.py": "def helper(x):\n    return x\n",
    })
    held = project.flow.values("pkg/a.py", "A.run", ("self", "helper"))
    assert set(held) <= {("func", "pkg/a.py", "A.helper")}
    assert project.flow.values("pkg/a.py", "A.run", ("self", "other")) == {}
    assert set(project.flow.values("pkg/b.py", "B.go", ("self", "helper"))) == {("func", "pkg/a.py", "A.helper")}
    sites = SiteFiles(project.flow, None)
    assert sites.may_reach("pkg/b.py", "helper", ("bind", ("pkg/a.py", "A.helper"), False), False)
    assert not sites.may_reach("pkg/b.py", "helper", ("bind", ("pkg/c.py", "helper"), False), False)
    assert not sites.reaches_own_only("pkg/b.py", "helper", False)


def test_a_subclass_s_self_call_is_kept_through_a_chain_of_bases_and_an_alias():
    """For a question about `A.helper`, a file whose class derives from A (directly, through
    another file's subclass, or under an imported alias) keeps its `self.helper(...)`; a class
    deriving from something else does not (mmdet-style: BaseDetector -> SingleStageDetector ->
    a detector of a third file)."""
    from amplint.analysis.project import build
    from amplint.analysis.project.site_files import SiteFiles

    files = {
        "pkg/a.py": "class A:\n    def helper(self, x):\n        return x\n",
        "pkg/b.py": "from pkg.a import A\n\nclass B(A):\n    pass\n",
        "pkg/c.py": "from pkg.b import B\n\nclass C(B):\n    def go(self, m):\n        return self.helper(m)\n",
        "pkg/e.py": "import torch.nn as nn\n\nclass E(nn.Module):\n    def go(self, m):\n        return self.helper(m)\n",
    }
    question = ("bind", ("pkg/a.py", "A.helper"), False)
    sites = SiteFiles(build(files).flow, None)
    assert sites.may_reach("pkg/c.py", "helper", question, False)
    assert not sites.may_reach("pkg/e.py", "helper", question, False)
    files["pkg/f.py"] = "from pkg.a import A as Base\n\nclass F(Base):\n    def go(self, m):\n        return self.helper(m)\n"
    sites = SiteFiles(build(files).flow, None)
    assert sites.may_reach("pkg/f.py", "helper", question, False)
    assert sites.may_reach("pkg/e.py", "helper", question, False)  # an alias: the text cannot bound them


def test_a_file_is_read_for_its_conditional_class_calls_once(monkeypatch):
    """fairseq-shaped (facebookresearch/fairseq's model builders): `build_model` calls
    `(TransformerEncoderLayer if cfg.base else MoELayer)(cfg)`, and a subclass of each calls
    `super().__init__(cfg)`. Each question about a name the file binds indirectly asks
    whether a conditional class call binds it: the file's text is read for those calls once,
    not once per question (on start: once per question, 4 == 1 fails); the answers stay."""
    from types import SimpleNamespace

    from amplint.analysis.project import site_files
    from amplint.analysis.project.call_words import indirect_binders

    text = ("from fairseq.modules import TransformerEncoderLayer, MoELayer\n\n\n"
            "class Layer(TransformerEncoderLayer):\n    def __init__(self, cfg):\n        super().__init__(cfg)\n\n\n"
            "def build_model(cfg):\n    return (TransformerEncoderLayer if cfg.base else MoELayer)(cfg)\n")
    project = SimpleNamespace(files={"fairseq/models/builder.py": text}, python=["fairseq/models/builder.py"])
    sites = site_files.SiteFiles(SimpleNamespace(p=project), None)
    read = []
    inner = site_files.conditionally_called
    monkeypatch.setattr(site_files, "conditionally_called", lambda text: read.append(1) or inner(text))
    binders = indirect_binders(text)
    assert binders[1] >= {"TransformerEncoderLayer", "MoELayer"}
    for name in ("TransformerEncoderLayer", "MoELayer", "TransformerEncoderLayer", "MoELayer"):
        question = ("class", ("fairseq/modules/layer.py", name), True)
        assert sites.binds_indirectly("fairseq/models/builder.py", name, question, False, binders)
    assert len(read) == 1
