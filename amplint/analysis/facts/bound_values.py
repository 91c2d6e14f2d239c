"""What a name, attribute or call of this file may hold, as the project pass's points-to solve
computed it over every binding construct (arguments and parameters, defaults, returns,
attributes of instances and classes, containers, closures, decorators, `functools.partial`),
with the atoms rules ask about (project/pointsto_atoms.py): numbers an eps or a fill may be,
`torch.device` objects, models a half cast returns. One answer for every rule, handed to the file
as an EntryBoundSpans (project/bound_flow.py); without one, nothing is known here.

The entry names each expression by its code; an expression is answered when every expression of
the file with the same code agrees (no position is needed, so the facts stay below the engine).
A value holds on some path through the calls the solve sees (it is context-insensitive): a rule
reads it where one path is enough for the hazard, or where every value agrees (`only`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.data import dtype_rules as _R
from amplint.analysis.facts.names import resolve_expr

Start = Tuple[int, int]  # line, column (UTF-8 bytes) as `ast` gives them
# beside the atoms of a span: a caller the solve does not see may pass it another value
# (project/pointsto_atoms.py); readers that need every value refuse it, the others ignore it
OPEN = "O:"
_DTYPE_ATOMS = {"E:" + name: dtype for name, dtype in _R.DTYPE_NAMES.items()}


@dataclass(frozen=True)
class EntryBoundSpans:
    """The expressions of this file whose values hold atoms, as the project's solve found them:
    (their code, where they start, the atoms, whether they also hold anything else). `module`:
    this file's module in the solve; `paths`: (module, displayed path) of the other files an
    atom comes from."""

    module: str
    spans: Tuple[Tuple[str, Start, Tuple[str, ...], bool], ...]
    paths: Tuple[Tuple[str, str], ...]


@dataclass(frozen=True)
class EntryHalfRead:
    """The model the half cast at (line, column) of this file returns is read at `read`
    ("train.py:35", `code`) under the autocast region opened at `region` of another file."""

    line: int
    column: int
    read: str
    code: str
    region: str


class BoundValues:
    def __init__(self, module: cst.Module, entries=()) -> None:
        self.module = module
        self.entry = next((e for e in entries if isinstance(e, EntryBoundSpans)), None)
        self.half_entries = [e for e in entries if isinstance(e, EntryHalfRead)]
        self.name = self.entry.module if self.entry is not None else ""
        self.paths = dict(self.entry.paths) if self.entry is not None else {}
        self._by_code: Optional[Dict[str, List[Tuple[Start, Set[str], bool]]]] = None

    def _code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def _candidates(self, node: cst.CSTNode) -> List[Tuple[Start, Set[str], bool]]:
        if self.entry is None:
            return []
        if self._by_code is None:
            self._by_code = {}
            for code, start, atoms, other in self.entry.spans:
                self._by_code.setdefault(code, []).append((start, set(atoms), other))
        return self._by_code.get(self._code(node), [])

    def may_hold(self, prefix: str) -> bool:
        return self.entry is not None and any(
            a.startswith(prefix) for _c, _s, atoms, _o in self.entry.spans for a in atoms)

    def only(self, expr: cst.CSTNode, prefix: str) -> Optional[Set[str]]:
        """The atoms of `expr` when it holds some and nothing else, all starting with `prefix`
        (every expression of the file written the same way agreeing)."""
        if not self.may_hold(prefix):
            return None
        found = [(s, atoms - {OPEN}, other) for s, atoms, other in self._candidates(expr)]
        if not found or any(other or not atoms or any(not a.startswith(prefix) for a in atoms)
                            for _s, atoms, other in found):
            return None
        return set().union(*(atoms for _s, atoms, _o in found))

    def one_dtype(self, expr: cst.CSTNode) -> Optional[str]:
        """The dtype of `dtypes(expr)` when it is one."""
        found = self.dtypes(expr)
        return next(iter(found)) if found and len(found) == 1 else None

    def dtypes(self, expr: cst.CSTNode) -> Optional[Set[str]]:
        """The dtypes ("bfloat16", "float16", ...) of the dtype objects `expr` holds on every path
        the solve sees, when it holds those and nothing else, and no caller it does not see may
        pass another (`dtype=self.compute_dtype`, set from a helper returning `torch.bfloat16`)."""
        found = self._candidates(expr) if self.may_hold("E:torch.") else []
        if not found or any(other or not atoms or any(a not in _DTYPE_ATOMS for a in atoms)
                            for _s, atoms, other in found):
            return None
        return {_DTYPE_ATOMS[a] for _s, atoms, _o in found for a in atoms}

    def numbers(self, expr: cst.CSTNode) -> Optional[Set[float]]:
        """The numbers `expr` holds when it holds nothing else (pointsto_atoms.number)."""
        found = self.only(expr, "R:")
        return {float(v[2:].split("@", 1)[0]) for v in found} if found else None

    def devices(self, expr: cst.CSTNode) -> Optional[List[str]]:
        """Where the `torch.device(...)` calls are whose objects `expr` holds ("line 12",
        "utils/misc.py:6"), when it holds those and nothing else."""
        found = self.only(expr, "X:device@")
        if not found:
            return None
        out = []
        for atom in sorted(found):
            module, line, _column = atom.split("@", 1)[1].rsplit(":", 2)
            out.append("line %s" % line if module == self.name else "%s:%s" % (self.paths.get(module, module), line))
        return out

    def _cast(self, cast: cst.Call) -> Optional[Tuple[str, Start, Set[str]]]:
        """(the half atom of `cast`, where it starts, its atoms), when the file writes this cast
        once."""
        if not self.may_hold("X:half@"):
            return None
        found = self._candidates(cast)
        if len(found) != 1:
            return None
        start, atoms, _other = found[0]
        atom = "X:half@%s:%d:%d" % (self.name, start[0], start[1])
        return (atom, start, atoms) if atom in atoms else None

    def half_read_codes(self, cast: cst.Call) -> Tuple[Optional[str], Set[str]]:
        """(the atom of `cast`, the code of the file's expressions that may hold its model)."""
        found = self._cast(cast)
        if found is None:
            return None, set()
        atom, start, _atoms = found
        return atom, {code for code, s, atoms, _o in self.entry.spans if s != start and atom in atoms}

    def holds(self, expr: cst.CSTNode, atom: str) -> bool:
        """Every expression of the file written as `expr` may hold `atom`."""
        found = self._candidates(expr)
        return bool(found) and all(atom in atoms for _s, atoms, _o in found)

    def casts_instance(self, cast: cst.Call) -> bool:
        """The half cast `cast` returns an instance of a project class (a model the solve
        followed), whatever its name."""
        found = self._cast(cast)
        return found is not None and "X:instance" in found[2]

    def half_read_elsewhere(self, cast: cst.Call) -> Optional[EntryHalfRead]:
        """Where another file reads the model `cast` returns under its autocast region."""
        found = self._cast(cast) if self.half_entries else None
        if found is None:
            return None
        return next((e for e in self.half_entries if (e.line, e.column) == found[1]), None)


def dtype_object(facts, expr: cst.BaseExpression, frame) -> Optional[str]:
    """The dtype ("bfloat16", "float32", "integer", ...) a `torch.dtype` expression names: a torch
    dtype attribute (through import aliases and constants bound once), else the one dtype the
    project's solve binds it to on every path (`x.to(self.compute_dtype)`,
    `torch.zeros(n, dtype=cfg_dtype)`); None when unknown."""
    name = _R.DTYPE_NAMES.get(resolve_expr(expr, frame) or "")
    if name is None and isinstance(expr, (cst.Name, cst.Attribute, cst.Call)):
        name = facts.bound_values.one_dtype(expr)
    return name
