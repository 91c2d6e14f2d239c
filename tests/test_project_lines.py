"""Line numbers of the project summaries without generating the module's code (issue 34).

`node_lines(module, nodes, source, anchors)` must give every node the line that one code
generation of the whole module gives (`node_lines(module, nodes)`): the old way, kept as the
fallback and as the reference here. The module below mixes what detectron2 / timm model files
hold: decorated and async functions, comments between decorators, black-style calls spread
over lines inside parentheses, elif chains, try/except/else/finally, with statements, one-line
bodies, semicolons, backslash continuations, f-strings with calls, a match statement,
lambdas and comprehensions."""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.syntax import iter_nodes
from amplint.analysis.parsing import parse
from amplint.analysis.project import lines as lines_module
from amplint.analysis.project.lines import node_lines, statement_starts
from amplint.analysis.project.summary import _Summarizer, summarize

MODULE = '''#!/usr/bin/env python
# (a licence header comment stood here in the model files this imitates)
"""A model file: heads, a registry, a training step."""
import logging
from typing import Dict, List

import torch
from torch import nn
from detectron2.modeling import META_ARCH_REGISTRY, build_backbone

logger = logging.getLogger(__name__); DEBUG = bool(int("0"))
_CFG = dict(
    type="RetinaNet",  # the head
    loss=dict(type=str("FocalLoss")),
)


def _init(m):  return nn.init.normal_(m.weight, std=float("0.01"))


# registered below
@META_ARCH_REGISTRY.register()
# a comment between the decorators
@torch.no_grad()
class Head(nn.Module):
    """Multi-line
    docstring with a call(inside) it."""

    def __init__(self, dim: int = int("4"), *args, scale=float(2), **kw):
        super().__init__()
        self.proj = nn.Linear(
            dim,  # in
            dim * 2,
        )
        self.norm = (
            nn.LayerNorm(dim)
        )
        self.acts = [nn.ReLU() for _ in range(int(dim))]
        self.fn = lambda x: torch.relu(
            x)

    async def fetch(self, x):
        async with torch.autocast("cuda"):
            return await self.proj(x)

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        if x.dim() == 3:
            x = x.unsqueeze(0)
        elif (
            x.dim() == 5
        ):
            x = x.flatten(
                0, 1)
        else: x = torch.clone(x)
        total = x.sum() + \\
            torch.ones(1).sum()
        try:
            y = self.proj(x)
        except (RuntimeError, ValueError) as exc:
            logger.warning(f"failed: {str(exc)} at {len(x)}")
            raise
        else:
            y = self.norm(y)
        finally:
            logger.debug("done")
        with torch.autocast("cuda"), torch.no_grad():
            z = {k: torch.sigmoid(v) for k, v in dict(a=y).items()}
        for i in range(len(self.acts)):
            y = self.acts[i](y)
        else:
            pass
        while torch.isnan(y).any():
            y = torch.nan_to_num(y)
        match y.dim():
            case 2 if bool(y.numel()):
                return {"out": torch.relu(y)}
            case _:
                return {"out": y, "z": z["a"], "t": total}


def build(cfg) -> Head:
    model = Head(
        # a comment inside the call
        int(cfg.get("dim", 4)),
    )
    return model.cuda().half()


if __name__ == "__main__":
    print(build(_CFG)(torch.zeros(2, 4)))
'''


def _check(source: str, expect_fast: bool = True):
    module = parse(source)
    facts = FileFacts(module)
    summarizer = _Summarizer("m.py", module, facts, True, source)
    nodes = [node for node in iter_nodes(module)
             if isinstance(node, (cst.Call, cst.Param, cst.BaseStatement, cst.Name))]
    anchors = summarizer._anchors(nodes)
    for node in nodes:
        if isinstance(node, cst.BaseStatement):
            anchors[id(node)] = node  # a statement is its own anchor
    old = node_lines(module, nodes)
    new = node_lines(module, nodes, source, anchors)
    assert new == old
    assert (statement_starts(module, source) is not None) == expect_fast
    return module, nodes, old


def test_lines_match_code_generation_on_a_model_file():
    module, nodes, old = _check(MODULE)
    calls = [node for node in nodes if isinstance(node, cst.Call)]
    assert len(calls) >= 60 and len(set(old.values())) >= 60  # the module is exercised, not empty


def test_lines_match_with_crlf_endings():
    _check(MODULE.replace("\n", "\r\n"))


def test_a_lone_carriage_return_falls_back_to_code_generation():
    _check(MODULE.replace("Multi-line", "Multi-\rline"), expect_fast=False)  # in a docstring


def test_known_lines_of_cited_nodes():
    module, nodes, old = _check(MODULE)
    text_lines = MODULE.split("\n")

    def line_of(snippet: str) -> int:
        return next(i for i, text in enumerate(text_lines, 1) if snippet in text)

    calls = {cst.Module([]).code_for_node(node.func): old[id(node)]
             for node in nodes if isinstance(node, cst.Call)}
    assert calls["torch.nan_to_num"] == line_of("torch.nan_to_num")
    assert calls["torch.ones(1).sum"] == line_of("torch.ones(1).sum()")
    assert calls["str"] == line_of("failed: {str(exc)}")
    # a parenthesised call starts at its opening parenthesis, a statement at its comments
    assert calls["nn.LayerNorm"] == line_of("self.norm = (")
    head = next(n for n in nodes if isinstance(n, cst.ClassDef))
    assert old[id(head)] == line_of("# registered below") - 2  # the two blank lines before it


def test_a_node_outside_its_anchor_still_gets_its_line():
    module = parse(MODULE)
    facts = FileFacts(module)
    calls = [site for site in facts.tree.calls if site.top_stmt is not None]
    compound = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    wrong = {id(site.node): compound for site in calls}  # every call anchored to `_init`
    nodes = [site.node for site in calls]
    assert node_lines(module, nodes, MODULE, wrong) == node_lines(module, nodes)


def test_a_text_that_is_not_the_module_falls_back():
    module = parse(MODULE)
    other = "x = 1\n" * 3
    assert statement_starts(module, other) is None


def test_summary_lines_do_not_generate_the_whole_module(monkeypatch):
    """A portable summary of the model file places every line without generating the whole
    module's code (which was most of a summary's cost on detectron2)."""
    generated = []
    original = lines_module._generated_lines

    def spy(module, root, wanted, line=1, stop=False):
        generated.append(root)
        return original(module, root, wanted, line, stop)

    monkeypatch.setattr(lines_module, "_generated_lines", spy)
    fast = summarize("m.py", MODULE, portable=True)
    assert generated and all(not isinstance(root, cst.Module) for root in generated)
    monkeypatch.setattr(lines_module, "_generated_lines", original)
    monkeypatch.setattr(lines_module, "_paired_statements", lambda module, source: None)
    slow = summarize("m.py", MODULE, portable=True)  # the old way: the whole module generated
    for name, function in fast.functions.items():
        assert [c.line for c in function.calls] == [c.line for c in slow.functions[name].calls]
    assert fast._lines == slow._lines and fast._lines


@pytest.mark.parametrize("source", ["", "# only a comment\n", "x = 1", "def f():\n    pass\n"])
def test_small_modules(source):
    _check(source)
