"""amplint.analysis.facts.defuse: rebinding, in-place mutation and passing on between two points."""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.facts.defuse import DefUse, is_duplicable


def _setup(source: str):
    module = cst.parse_module(source)
    func = module.body[0]
    assert isinstance(func, cst.FunctionDef)
    stmts = [s for s in func.body.body]
    return DefUse(module), func, stmts


def _kinds(source: str, name: str, first: int = 0, last: int = -1):
    defuse, func, stmts = _setup(source)
    return [c.kind for c in defuse.changes(name, stmts[first], stmts[last], func)]


@pytest.mark.parametrize("middle, kind", [
    ("z = z * 2", "rebound"),
    ("z += 1", "rebound"),
    ("z.mul_(2)", "mutated"),
    ("z.data.clamp_(0, 1)", "mutated"),
    ("z[0] = 1.0", "mutated"),
    ("z[mask] += 1", "mutated"),
    ("torch.mul(a, b, out=z)", "mutated"),
    ("fill(z)", "passed"),
    ("fill(z[0])", "passed"),
    ("for z in zs: pass", "rebound"),
    ("del z", "rebound"),
    ("with ctx() as z: pass", "rebound"),
])
def test_changes_between_two_points(middle, kind):
    source = f"def f(z, a, b, y):\n    p = z.sigmoid()\n    {middle}\n    loss = bce(p, y)\n"
    assert kind in _kinds(source, "z")


@pytest.mark.parametrize("middle", ["w = z * 2", "z.sum()", "print(a)", "q = z[0]", "pass"])
def test_reads_are_not_changes(middle):
    source = f"def f(z, a, b, y):\n    p = z.sigmoid()\n    {middle}\n    loss = bce(p, y)\n"
    assert _kinds(source, "z") == []


def test_only_the_window_counts():
    source = ("def f(z, y):\n    z.mul_(2)\n    p = z.sigmoid()\n    loss = bce(p, y)\n"
              "    z = z + 1\n    return loss\n")
    defuse, func, stmts = _setup(source)
    assert defuse.changes("z", stmts[1], stmts[2], func) == []
    assert defuse.changes("z", stmts[0], stmts[3], func) == []
    assert [c.kind for c in defuse.changes("z", stmts[0], stmts[4], func)] == ["rebound"]


def test_a_loop_around_the_use_counts_whole():
    """Changed later in the loop body: the next iteration's use sees the change."""
    source = ("def f(z, y):\n    p = z.sigmoid()\n    for i in range(3):\n"
              "        loss = bce(p, y)\n        z.mul_(2)\n")
    defuse, func, stmts = _setup(source)
    use = stmts[1].body.body[0]
    assert [c.kind for c in defuse.changes("z", stmts[0], use, func)] == ["mutated"]
    # both in the loop: a later change in the body does not reach this iteration's use
    source2 = ("def f(z, y):\n    for i in range(3):\n        p = z.sigmoid()\n"
               "        loss = bce(p, y)\n        z.mul_(2)\n")
    defuse, func, stmts = _setup(source2)
    body = stmts[0].body.body
    assert defuse.changes("z", body[0], body[1], func) == []


def test_global_and_nonlocal_escape():
    source = ("def f(z, y):\n    p = z.sigmoid()\n    def g():\n        nonlocal z\n"
              "        z = 0\n    loss = bce(p, y)\n")
    defuse, func, stmts = _setup(source)
    assert [c.kind for c in defuse.changes("z", stmts[0], stmts[-1], func)] == ["escapes"]


@pytest.mark.parametrize("expr, ok", [
    ("z", True), ("self.head.out", True), ("1.0", True), ("x[0]", True), ("x[:, -1]", True),
    ("x[..., None]", True), ("net(x)", False), ("x.float()", False), ("a * b", False),
    ("x[idx]", False), ("x[i:j]", False), ("[a, b]", False), ("lambda: 0", False),
])
def test_is_duplicable(expr, ok):
    assert is_duplicable(cst.parse_expression(expr)) is ok


def test_unchanged_between_attribute_needs_no_call_in_between():
    source = ("def f(self, y):\n    p = self.z.sigmoid()\n    self.update()\n    loss = bce(p, y)\n")
    defuse, func, stmts = _setup(source)
    z = cst.parse_expression("self.z")
    assert not defuse.unchanged_between(z, stmts[0], stmts[-1], func)
    assert defuse.unchanged_between(z, stmts[1], stmts[-1], func)
    assert not defuse.unchanged_between(cst.parse_expression("net(x)"), stmts[1], stmts[-1], func)


def test_exposed_on_file_facts():
    from amplint.analysis.facts import FileFacts

    module = cst.parse_module("def f(z):\n    z.add_(1)\n    return z\n")
    facts = FileFacts(module)
    func = module.body[0]
    body = func.body.body
    assert facts.defuse.changes("z", body[0], body[1], func) == []
    assert facts.defuse.precedes(body[0], body[1], func)
