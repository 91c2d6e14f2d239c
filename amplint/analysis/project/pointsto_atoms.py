"""The values rules ask about, carried by the points-to resolver as atoms beside the project's
functions, classes and instances (only when the extractor is asked for them, `atoms=True`:
facts/bound_values.py): so that every binding construct the resolver models (arguments and
parameters, defaults, returns, attributes of instances and classes, containers, closures,
decorators, `functools.partial`) carries them too, for every rule at once.

Atoms (data values, bounded per node as the resolver's other data):
- "R:<number>@<module>": a numeric literal an eps or a fill constant may be (below 1e-3 or at least
  float16's largest finite value in magnitude); "R:~" any other number (so that a value which
  may also be an ordinary number is no eps or fill constant);
- "X:device@<module>:<line>:<col>": what the `torch.device(...)` call there returns;
- "X:half@<module>:<line>:<col>": the value the half cast at that position returns (`m.half()`,
  `m.bfloat16()`, `m.to(torch.float16)`, `m.to(dtype=dt)` with `dt` holding a half dtype); a
  cast back (`.float()`, `.to(torch.float32)`) drops it, a move (`.cuda()`, `.to(device)`,
  `.eval()`) keeps it;
- "E:torch.<dtype>" (the resolver's own outside name of `torch.bfloat16`, `torch.float16`, ...):
  a dtype object;
- "O:": whatever code outside the solve may pass (every parameter but a method's `self` may get
  it from a call the solve does not see), and what is read, called or iterated from it. The
  resolver is a may-analysis: a value it cannot see adds nothing, so a reader that needs every
  value (`dtype=self.compute_dtype` being bfloat16 on every path) asks that no "O:" is among them.
"""

from __future__ import annotations

import ast
import math
from typing import Optional

from amplint.analysis.facts.bound_values import OPEN  # noqa: F401  (the resolver's name for it)

HALF_DTYPES = frozenset({"E:torch.float16", "E:torch.half", "E:torch.bfloat16"})
FULL_DTYPES = frozenset({"E:torch.float32", "E:torch.float", "E:torch.float64", "E:torch.double"})
DEVICE_FACTORIES = frozenset({"torch.device"})
_HALF = ("half", "bfloat16")
_FULL = ("float", "double")
_KEEP = ("cuda", "cpu", "eval", "train", "requires_grad_", "to_empty", "share_memory")
_FP16_MAX = 65504.0


OTHER_NUMBER = "R:~"
DTYPES = HALF_DTYPES | FULL_DTYPES
INSTANCE = "X:instance"  # beside other atoms of a span: it also holds an instance of a project class


def number(node: ast.expr, module: str = "") -> Optional[str]:
    """"R:<value>@<module>" for a numeric literal (or its negation) that may matter as an eps or
    a fill constant, "R:~" for another number; None for any other expression."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if not isinstance(node, ast.Constant) or type(node.value) not in (int, float):
        return None
    value = sign * node.value
    if math.isfinite(value) and value != 0 and (abs(value) < 1e-3 or abs(value) >= _FP16_MAX):
        return "R:%r@%s" % (float(value), module)
    return OTHER_NUMBER


def cast_kind(node: ast.Call) -> Optional[str]:
    """How a method call may change its receiver's precision: "half", "full", "keep", or "to"
    (`.to(...)`: decided by what its arguments hold); None for any other call."""
    attr = node.func.attr  # type: ignore[attr-defined]
    if attr in _HALF and not node.args and not node.keywords:
        return "half"
    if attr in _FULL and not node.args and not node.keywords:
        return "full"
    if attr in _KEEP:
        return "keep"
    if attr == "to":
        return "to"
    return None


def atom_site(atom: str):
    """(module, line, column) of an "X:...@<module>:<line>:<col>" atom."""
    module, line, column = atom.split("@", 1)[1].rsplit(":", 2)
    return module, int(line), int(column)


def number_value(atom: str) -> float:
    """The number of an "R:<value>@<module>" atom."""
    return float(atom[2:].split("@", 1)[0])
