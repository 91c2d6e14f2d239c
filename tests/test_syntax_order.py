"""The child walker (`facts.syntax.children_in_visit_order`, `calls_in`) goes in LibCST's own
visit order: facts that report in walk order (calls in evaluation order, AMP130's references)
read the same as with LibCST's visitor, which costs several times more (issue 34). Checked on
files of the installed torch (real code: decorators, lambdas, comprehensions, conditional
expressions, keyword arguments, except handlers)."""

from __future__ import annotations

import importlib.util
import os
from typing import List

import libcst as cst
import pytest

from amplint.analysis.facts.syntax import calls_in, children_in_visit_order, child_fields
from amplint.analysis.parsing import parse

_TORCH = importlib.util.find_spec("torch")
_FILES = ("nn/modules/module.py", "optim/lr_scheduler.py", "amp/grad_scaler.py")


def _torch_files() -> List[str]:
    if _TORCH is None or not _TORCH.submodule_search_locations:
        return []
    root = list(_TORCH.submodule_search_locations)[0]
    return [os.path.join(root, f) for f in _FILES if os.path.exists(os.path.join(root, f))]


class _Order(cst.CSTVisitor):
    def __init__(self) -> None:
        self.seen: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen.append(node)
        return True


class _Calls(cst.CSTVisitor):  # what calls_in was: LibCST's visitor, calls on leave
    def __init__(self) -> None:
        self.calls: List[cst.Call] = []

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def _walk(node: cst.CSTNode, out: List[cst.CSTNode]) -> None:
    out.append(node)
    for child in children_in_visit_order(node):
        _walk(child, out)


SAMPLE = '''
@decorate(lambda x: f(x))
def g(a, /, b=h(), *, c=k()) -> r():
    try:
        y = p() if q() else s()
    except (E(), F()) as err:
        t(key=u(), *v(), **w())
    return [m(i) for i in n() if o(i)]
class C(B(), metaclass=M()):
    pass
'''


@pytest.mark.parametrize("path", ["<sample>"] + _torch_files())
def test_walk_and_calls_follow_libcsts_visit_order(path):
    source = SAMPLE if path == "<sample>" else open(path, encoding="utf-8").read()
    module = parse(source)
    visitor = _Order()
    module.visit(visitor)
    ours: List[cst.CSTNode] = []
    _walk(module, ours)
    reached = {id(n) for n in ours}
    code = (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite)
    assert [n for n in visitor.seen if id(n) not in reached and isinstance(n, code)] == []
    # LibCST also visits whitespace and punctuation; the code nodes come in the same order
    assert [id(n) for n in visitor.seen if id(n) in reached] == [id(n) for n in ours]
    kinds = (cst.BaseStatement, cst.BaseExpression) if path == "<sample>" else cst.BaseStatement
    for node in ours:
        if isinstance(node, kinds):
            reference = _Calls()
            node.visit(reference)
            assert [id(c) for c in calls_in(node)] == [id(c) for c in reference.calls]
    if path == "<sample>":
        names = [c.func.value for c in calls_in(module) if isinstance(c.func, cst.Name)]
        # decorators first, the lambda's body skipped, the conditional's body before its test
        assert names[:2] == ["decorate", "h"]
        assert "f" not in names
        assert names.index("p") < names.index("q") < names.index("s")


def test_child_fields_hold_every_code_child():
    """No code node hides in a field the walker skips (whitespace, punctuation)."""
    module = parse(SAMPLE)
    visitor = _Order()
    module.visit(visitor)
    ours: List[cst.CSTNode] = []
    _walk(module, ours)
    reached = {id(n) for n in ours}
    missed = [n for n in visitor.seen if id(n) not in reached
              and isinstance(n, (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement))]
    assert missed == []
    assert "body" in child_fields(cst.FunctionDef)


@pytest.mark.parametrize("path", ["<sample>"] + _torch_files()[:2])
def test_node_positions_equal_libcsts_metadata(path):
    from libcst.metadata import MetadataWrapper, PositionProvider

    from amplint.analysis.engine import node_positions

    source = SAMPLE if path == "<sample>" else open(path, encoding="utf-8").read()
    module = parse(source)
    ours = node_positions(module)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert len(ours) == len(theirs) > 100
    assert all(ours[node] == theirs[node] for node in theirs)


@pytest.mark.parametrize("path", ["<sample>"] + _torch_files())
def test_positions_of_some_nodes_equal_the_whole_modules(path):
    """`positions_of` generates only the top-level statements holding the nodes asked for
    (placed by `ast`, checked against the text); their ranges are the whole pass's."""
    from amplint.analysis.facts.syntax import iter_nodes
    from amplint.analysis.positions import node_positions, positions_of

    source = SAMPLE if path == "<sample>" else open(path, encoding="utf-8").read()
    for text in (source, source.rstrip("\n"), "# header\n\n" + source + "\n# footer\n"):
        module = parse(text)
        whole = node_positions(module)
        nodes = list(iter_nodes(module))
        for wanted in (nodes[-1:], nodes[len(nodes) // 2::97], nodes[5::31]):
            some = positions_of(module, text, wanted)
            assert all(some[node] == whole[node] for node in wanted)
        last = positions_of(module, text, nodes[-1:])
        if len(module.body) > 4:  # only the last statement was generated
            assert len(last) < len(whole)


def test_positions_of_generates_only_the_body_statements_holding_the_nodes():
    """A node in one statement of one method: only that statement is generated (not its
    class, nor the module), with the same ranges as the whole pass; a node in a header (a
    decorator, a `with` item, the def itself) generates its whole statement."""
    from amplint.analysis.facts.syntax import iter_nodes
    from amplint.analysis.positions import node_positions, positions_of

    methods = "".join(
        f"    @staticmethod\n    def m{i}(x):\n        # note {i}\n        y = x + {i}\n"
        f"        with ctx({i}):\n            z = y * {i}; w = z\n        return y\n\n"
        for i in range(30))
    text = "import torch\n\n\nclass Big:\n    '''doc'''\n\n" + methods + "\ndone = Big()\n"
    for source in (text, text.replace("    ", "\t"), text.rstrip("\n")):
        module = parse(source)
        whole = node_positions(module)
        nodes = list(iter_nodes(module))
        integers = [n for n in nodes if isinstance(n, cst.Integer)]
        for wanted, most in (
            ([integers[40]], 30),  # in `y = x + 13`: that line (24 nodes) only
            ([integers[41], integers[-1]], 100),  # statements of two methods
            ([n for n in nodes if isinstance(n, cst.Decorator)][7:8], 100),  # one method (91)
            ([n for n in nodes if isinstance(n, cst.FunctionDef)][3:4], 100),
            ([n for n in nodes if isinstance(n, cst.WithItem)][5:6], 50),  # the whole `with`
            ([nodes[-1]], 30),  # the file's last statement
        ):
            some = positions_of(module, source, wanted)
            assert all(some[node] == whole[node] for node in wanted)
            assert len(some) <= most < len(whole) // 10, (wanted, len(some))
