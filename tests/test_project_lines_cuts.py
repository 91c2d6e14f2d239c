"""Code generations the project summaries make to find line numbers (issue 34). Every line
must equal the one code generation of the whole module gives; the counts below are what a
summary costs: a multi-line `def`'s parameters and name come from Python's `ast`, and the
protocol summary anchors its nodes instead of generating the whole module.

The sources imitate Lightning's precision plugins (`lightning/fabric/plugins/precision/amp.py`:
black-style multi-line signatures, `*args`/`**kwargs`, a GradScaler driven by helper
methods)."""

from __future__ import annotations

import libcst as cst

from amplint.analysis.facts import FileFacts
from amplint.analysis.parsing import parse
from amplint.analysis.project import lines as lines_module
from amplint.analysis.project.lines import node_lines
from amplint.analysis.project.scaler_summaries import summarize_scaler
from amplint.analysis.project.summary import _all_params, summarize

PLUGIN = '''"""A mixed-precision plugin."""
from contextlib import contextmanager

import torch
from torch import nn

from lightning.pytorch.trainer import Trainer


class MixedPrecision:
    def __init__(
        self,
        trainer: Trainer,
        precision: str,
        module: nn.Module = None,
        device: str = "cuda",
        scaler=None,  # a GradScaler
        *args,
        keep: bool = False,
        **kwargs,
    ) -> None:
        self.trainer = trainer
        self.module = module
        self.precision = precision
        self.device = device
        self.scaler = scaler or torch.cuda.amp.GradScaler()

    async def \\
            fetch(self, x, *
                  rest):
        return await self.convert(x)

    def convert(
        self, x, dtype=torch.float16
    ):
        return x.to(dtype)

    @contextmanager
    def forward_context(
        self,
    ):
        with torch.autocast(
            self.device, dtype=torch.float16
        ):
            yield

    def backward(
        self,
        loss,
        optimizer,
    ):
        self.scaler.scale(
            loss
        ).backward()
        self._step(
            optimizer,
        )

    def _step(self, optimizer):
        self.scaler.unscale_(optimizer)
        self.scaler.step(
            optimizer
        )
        self.scaler.update()
        return None


def train_step(
    model: nn.Module,
    batch,
    optimizer,
    scaler: torch.cuda.amp.GradScaler,
):
    with torch.autocast("cuda"):
        loss = model(batch).sum()
    scaler.scale(loss).backward()
    scaler.step(
        optimizer)
    scaler.update()
'''


def _methods(module):
    cls = next(n for n in module.body if isinstance(n, cst.ClassDef))
    return [n for n in cls.body.body if isinstance(n, cst.FunctionDef)]


def _spy(monkeypatch):
    roots = []
    original = lines_module._generated_lines

    def spy(module, root, wanted, line=1, stop=False):
        roots.append(type(root).__name__)
        return original(module, root, wanted, line, stop)

    monkeypatch.setattr(lines_module, "_generated_lines", spy)
    return roots


def test_a_multi_line_def_needs_no_code_generation_for_its_parameters(monkeypatch):
    roots = _spy(monkeypatch)
    fast = summarize("amp.py", PLUGIN, portable=True)
    assert "FunctionDef" not in roots and "Module" not in roots
    monkeypatch.setattr(lines_module, "_paired_statements", lambda module, source: None)
    slow = summarize("amp.py", PLUGIN, portable=True)  # the whole module generated
    assert "Module" in roots
    assert fast._lines == slow._lines and fast._lines


def test_parameter_and_name_lines_equal_code_generation():
    module = parse(PLUGIN)
    defs = _methods(module) + [module.body[-1]]
    nodes, anchors = [], {}
    for node in defs:
        for part in [node.name, *_all_params(node.params)]:
            nodes.append(part)
            anchors[id(part)] = node
    assert len(nodes) > 20
    assert node_lines(module, nodes, PLUGIN, anchors) == node_lines(module, nodes)


def test_a_star_apart_from_its_name_is_left_to_code_generation(monkeypatch):
    module = parse(PLUGIN)
    fetch = next(n for n in _methods(module) if n.name.value == "fetch")
    rest = fetch.params.star_arg
    nodes = [fetch.name, rest]
    roots = _spy(monkeypatch)
    found = node_lines(module, nodes, PLUGIN, {id(n): fetch for n in nodes})
    line = PLUGIN.split("\n").index("            fetch(self, x, *") + 1
    assert found == {id(fetch.name): line, id(rest): line}  # the star's line, not `rest`'s
    assert roots == ["FunctionDef"]  # the name is on a line of its own: generated


def test_a_protocol_summary_does_not_generate_the_module(monkeypatch):
    module = parse(PLUGIN)
    roots = _spy(monkeypatch)
    fast = summarize_scaler("amp.py", module, FileFacts(module), True, PLUGIN)
    assert "Module" not in roots and len(roots) <= 4  # the multi-line statements only
    slow = summarize_scaler("amp.py", module, FileFacts(module), True)
    assert "Module" in roots
    assert fast.functions == slow.functions and fast.functions
    assert fast.flags == slow.flags


def test_a_file_pairs_its_statements_once_for_both_summaries(monkeypatch):
    """The first pass makes a file's portable summary and its protocol summary from one parse:
    Python's statements are paired with LibCST's once for both."""
    pairings = []
    original = lines_module._pair_statements
    monkeypatch.setattr(lines_module, "_pair_statements",
                        lambda module, source: pairings.append(1) or original(module, source))
    module = parse(PLUGIN)
    facts = FileFacts(module)
    summarize("amp.py", PLUGIN, module, facts, portable=True)
    summarize_scaler("amp.py", module, facts, True, PLUGIN)
    assert len(pairings) == 1
