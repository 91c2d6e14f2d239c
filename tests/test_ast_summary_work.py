"""What the `ast` summaries (ast_summary.py) remember so that a file's summary costs work
proportional to its size, and that remembering changes nothing: a root name's meaning is looked
up once per scope (ast_names.ScopedNames), a name's value once per scope (ast_values), a
function's own statements are walked only when it has two returns or loops or more. The counts
below are operations, not time: a path that scans again per use makes them grow."""

from __future__ import annotations

import ast
import textwrap

from amplint.analysis.facts import FileFacts
from amplint.analysis.parsing import parse
from amplint.analysis.project import ast_flow, ast_names, ast_values
from amplint.analysis.project.ast_summary import Refusal, ast_summary, relative_imports
from amplint.analysis.project.ast_tree import AstCollector
from amplint.analysis.project.relative_names import Names
from amplint.analysis.project.summary import portable_summary


def libcst_summary(path, text):
    module = parse(text)
    return portable_summary(path, text, module, FileFacts(module))


# transformers/utils/type_validators.py: a relative import with a fallback binding in the
# `except`; the name stays a relative reference (Names.resolve), as in the LibCST summary
FALLBACK = textwrap.dedent('''
    try:
        from ..activations import ACT2FN
    except ImportError:
        ACT2FN = {}

    def activation_fn_key(value):
        if value not in ACT2FN:
            raise ValueError(f"one of {list(ACT2FN.keys())}")
''')

SCOPES = textwrap.dedent('''
    import torch
    import torch.nn as nn
    from .layers import Block, helper
    from . import heads
    try:
        from ..fast import kernel
    except ImportError:
        kernel = None

    nn = nn

    class Net(nn.Module):
        helper = staticmethod(helper)

        def forward(self, x, Block=None):
            import numpy as np
            heads = x
            with torch.no_grad():
                torch = np
                y = kernel(x)

            def inner(z):
                from .inner import helper
                return helper(z), Block, heads, torch, np

            return inner(y)

    def build(cfg):
        for Block in cfg:
            pass
        return Block, heads.Head, helper.sub.attr, kernel, torch.cat, nn.Linear
''')

NAMES = ["torch", "nn", "Block", "helper", "heads", "kernel", "np", "x", "self", "missing"]


def test_a_relative_import_with_a_fallback_binding_resolves_as_libcst_does():
    fast = ast_summary("pkg/utils/type_validators.py", FALLBACK)
    slow = libcst_summary("pkg/utils/type_validators.py", FALLBACK)
    assert not isinstance(fast, Refusal)
    assert [c.ref for c in fast.functions["activation_fn_key"].calls] == ["..activations.ACT2FN.keys"]
    assert fast == slow


def test_scoped_names_equal_names_in_every_frame():
    module = ast.parse(SCOPES)
    tree = AstCollector(module)
    relative = relative_imports(module)
    plain, scoped = Names(relative), ast_names.ScopedNames(relative)
    checked = 0
    for frame in tree.frames:
        for name in NAMES:
            for dotted in ((name,), (name, "a"), (name, "a", "b")):
                assert scoped.resolve(dotted, frame) == plain.resolve(dotted, frame), (frame.kind, frame.name, dotted)
                checked += 1
    answers = {scoped.resolve((name,), f) for f in tree.frames for name in NAMES}
    assert {"torch", "numpy", ".layers.helper", "..fast.kernel", None} <= answers  # every kind of answer
    assert checked == len(tree.frames) * len(NAMES) * 3


def _source(uses: int) -> str:
    body = "\n".join(f"    y{i} = torch.cat(x, block) + nn.functional.relu(x)" for i in range(uses))
    return f"import torch\nimport torch.nn as nn\nfrom .blocks import block\n\ndef step(x):\n{body}\n    return x\n"


def _counted(monkeypatch, owner, name: str, counts: dict, label: str):
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        counts[label] = counts.get(label, 0) + 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)


def _work(monkeypatch, uses: int) -> dict:
    counts: dict = {}
    _counted(monkeypatch, ast_names.ScopedNames, "_root", counts, "root lookups")
    _counted(monkeypatch, ast_values.AstValueReader, "_name", counts, "name values")
    _counted(monkeypatch, ast_flow, "own_statements", counts, "own statement walks")
    summary = ast_summary("pkg/train.py", _source(uses))
    assert not isinstance(summary, Refusal)
    assert len(summary.flow.functions["step"].calls) >= uses  # every use was read
    monkeypatch.undo()
    return counts


def test_lookups_do_not_grow_with_the_uses(monkeypatch):
    few, many = _work(monkeypatch, 10), _work(monkeypatch, 200)
    assert few["root lookups"] > 0 and few["name values"] > 0
    assert few == many
    assert few.get("own statement walks", 0) == 0  # one return: no walk


def test_two_returns_walk_the_function_once(monkeypatch):
    text = textwrap.dedent('''
        from .nets import Net

        def make(flag):
            if flag:
                return Net()
            return make(True)
    ''')
    counts: dict = {}
    _counted(monkeypatch, ast_flow, "own_statements", counts, "walks")
    fast = ast_summary("pkg/make.py", text)
    monkeypatch.undo()
    assert counts == {"walks": 1}
    assert fast == libcst_summary("pkg/make.py", text)
    assert len(fast.flow.functions["make"].returns) == 2


def test_an_instance_built_and_called_at_once_runs_its_forward():
    """detectron2 data/transforms/augmentation.py: `AugmentationList(augmentations)(self)`; the
    LibCST call graph (facts.callgraph) finds the class's __call__, and so must the `ast` summary;
    a local of the class's name shadows it."""
    text = textwrap.dedent('''
        from .transform import Transform

        class AugmentationList(Transform):
            def __call__(self, aug_input):
                return aug_input

        class AugInput:
            def apply_augmentations(self, augmentations):
                return AugmentationList(augmentations)(self)

            def shadowed(self, AugmentationList):
                return AugmentationList(self)(self)
    ''')
    fast = ast_summary("pkg/augmentation.py", text)
    assert fast.functions["AugInput.apply_augmentations"].local == ["AugmentationList.__call__"]
    assert fast.functions["AugInput.shadowed"].local == []
    assert fast == libcst_summary("pkg/augmentation.py", text)


def _method_calls(uses: int) -> str:
    body = "\n".join(f"    m.body.step{i}(x)" for i in range(uses))
    return f"from .nets import Net\n\ndef run(m, x):\n{body}\n    return Net()\n"


def _flow_dotted(monkeypatch, uses: int) -> int:
    counts: dict = {}
    _counted(monkeypatch, ast_flow, "dotted", counts, "dotted")
    summary = ast_summary("pkg/run.py", _method_calls(uses))
    monkeypatch.undo()
    assert not isinstance(summary, Refusal)
    assert len(summary.flow.functions["run"].dynamic) == uses  # every call was read
    return counts.get("dotted", 0)


def test_a_method_call_on_a_value_reads_its_dotted_name_once(monkeypatch):
    """`m.body.step(x)` on a parameter (a dynamic call the class flow follows): the flow's
    receiver reads the call's dotted name once per call (it used to read it twice)."""
    few, many = _flow_dotted(monkeypatch, 5), _flow_dotted(monkeypatch, 45)
    assert many - few == 40
    text = _method_calls(5)
    assert ast_summary("pkg/run.py", text) == libcst_summary("pkg/run.py", text)


AMP_TEXTS = [
    "amp=1", "x.amp =2", "clamp=3", "_amp=1", "\u00e9amp=1", "a amp  = 1", "f(amp\n=1)", "amp==1",
    "train = dict(amp=dict(enabled=True))", "ampx=1", "clamp=1; amp = 2", "# amp", "\u00b7amp=1", "1amp=2",
    "clamp=1\nclamp=2\nsample = 3\n(amp)=4", "",
]


def test_the_amp_gate_refuses_exactly_what_its_pattern_finds():
    """ast_tree.refusal searches `\\bamp\\s*=` by its literal prefix, then checks the boundary:
    the same texts are refused as by the pattern itself (unicode word characters included)."""
    import re

    from amplint.analysis.project.ast_tree import REFUSED_TEXT, refusal

    pattern, why = REFUSED_TEXT[0]
    assert pattern == r"\bamp\s*="
    for text in AMP_TEXTS:
        assert (refusal(text) == why) == bool(re.search(pattern, text)), repr(text)
    assert sum(refusal(t) == why for t in AMP_TEXTS) == 8  # (\u00b7 is no word character)
