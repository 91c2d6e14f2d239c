"""Float16 values handed to a function of another file (AMP140/AMP141 across files): muse-maskgit's
`MaskGit.generate`, a method of a module class that sample.py makes float16, passes its float16
logits to `gumbel_sample` of helpers.py, which adds Gumbel noise through `log(t, eps=1e-20)`.
Within one file float16_scope.float16_callees follows such calls; here the caller's file is read
with its entries (the EntryHalf saying which of its classes another file makes float16), its
float16 code is walked as the rules walk it, and each call of a name the file imports from a
project module is answered with the arguments that are float16 there (Float16Values.is_float16,
at that point of the walk). The answer travels as an EntryFloat16Args of the file defining the
function, whose float16_callees then start from it.

Candidates are the files with a class another file makes float16 (an EntryHalf) whose methods
(or the functions of the file those call) call a name the file imports, as the summary shows
before any LibCST parse; the callee must be a module-level function of another project file,
named by the import's own module (no re-export followed). A class cast in its own file is left
out: on fairseq the files with a `.half()` of their own (tests, benchmarks, scripts) were most of
this pass's parses for no entry."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from amplint.analysis.facts.half_callees import EntryFloat16Args
from amplint.analysis.facts.half_values import FrameWalker, data_chain, walk_float16_code
from amplint.analysis.facts.syntax import unparen
from amplint.analysis.facts.region_entries import EntryHalf
from amplint.analysis.data.triggers import ENTRY_NEEDS
from amplint.analysis.prefilter_entries import CodeNames, _signals
from amplint.analysis.project.text_views import called_names


_CODES = ("AMP140", "AMP141")
_NEEDS = frozenset(need for code in _CODES for need in ENTRY_NEEDS[code][1])


def float16_arg_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryFloat16Args, ...]]:
    found: Dict[str, List[EntryFloat16Args]] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        text = project.files.get(path)
        if not text:
            continue
        entries = project.entries_for(path)
        halves = {e.target for e in entries if isinstance(e, EntryHalf) and e.dtype == "float16"}
        if not halves:
            continue
        summary = project.made_summary(path) or project.planned_summary(path)
        if summary is None or not summary.imports:
            continue
        called = called_names(project, path)
        imported = {name: ref for name, ref in summary.imports.items() if name in called}
        refs = _calls_out(summary, halves, set(imported.values())) if imported else set()
        # no method of a float16 class (nor what it calls here) calls an imported name that
        # may hold a hazard
        imported = {name: ref for name, ref in imported.items()
                    if ref in refs and _may_hold_hazard(project, path, ref)}
        if not imported:
            continue
        for (cpath, function), (positions, keywords, cite) in _passed(project, path, text, entries, imported).items():
            found.setdefault(cpath, []).append(EntryFloat16Args(function, positions, keywords, cite))
    return {path: tuple(sorted(set(entries), key=repr)) for path, entries in found.items()}


def _passed(project, path: str, text: str, entries, imported: Dict[str, str]):
    """(file, function) -> (positions, keywords, cite) of the float16 arguments this file's
    float16 code passes to an imported module-level function."""
    from amplint.analysis.facts import FileFacts
    from amplint.analysis.project import parse_or_none
    from amplint.analysis.project.lines import node_lines

    module = parse_or_none(text)
    if module is None:
        return {}
    try:
        facts = FileFacts(module, tuple(entries))
        if not facts.fp16.float16_functions:
            return {}
        values = facts.half_values
        calls: List[Tuple[cst.Call, object, Tuple[int, ...], Tuple[str, ...]]] = []

        class Visitor(FrameWalker):
            def visit_Call(self, node: cst.Call) -> None:
                func = node.func
                if not isinstance(func, cst.Name) or func.value not in imported \
                        or func.value in self.frame.scope.bindings or _constructor(self.frame):
                    return
                positions, keywords = [], []
                for index, arg in enumerate(node.args):
                    if arg.star:
                        break
                    if values.is_float16(arg.value, self.frame) and _activation(arg.value, self.frame, values):
                        if arg.keyword is None:
                            positions.append(index)
                        else:
                            keywords.append(arg.keyword.value)
                if positions or keywords:
                    calls.append((node, self.frame, tuple(positions), tuple(keywords)))

        walk_float16_code(facts, lambda start: Visitor(facts, values, start))
    except (RecursionError, MemoryError):
        return {}
    out: Dict[Tuple[str, str], Tuple[Tuple[int, ...], Tuple[str, ...], str]] = {}
    lines = node_lines(module, [node for node, _f, _p, _k in calls]) if calls else {}
    for node, frame, positions, keywords in calls:
        target = _defining(project, path, imported[node.func.value])
        if target is None or target in out:
            continue
        function = frame.function
        owner = function.class_frame if function is not None else None
        name = f"{owner.name}.{function.name}" if owner is not None else getattr(function, "name", "")
        cite = f"passed by `{name}` of float16 code, at {project.display(path)}:{lines.get(id(node), 0)}"
        out[target] = (positions, keywords, cite)
    return out


def _defining(project, importer: str, ref: str) -> Optional[Tuple[str, str]]:
    """(file, function) when `ref` names a module-level function of another project file."""
    for cpath, attrs in project._module_candidates(importer, ref):
        if len(attrs) != 1 or cpath == importer:
            return None
        summary = project.planned_summary(cpath) or project.summary(cpath)
        if summary is not None and attrs[0] in summary.functions:
            return cpath, attrs[0]
        return None
    return None


def _may_hold_hazard(project, importer: str, ref: str) -> bool:
    """The function `ref` names, or one of its file it calls, holds what AMP140 or AMP141 needs
    (the prefilter's ENTRY_NEEDS: a tiny float literal, an optimizer, a reduction), read with
    `ast` before the caller is parsed with LibCST: on fairseq the callees of its float16
    classes (`quant_noise`, `get_window`, `get_mask_from_lengths`) hold none."""
    for cpath, attrs in project._module_candidates(importer, ref):
        text = project.files.get(cpath)
        if not text or len(attrs) != 1 or _signals(_CODES)(text) is None:
            return False
        code = CodeNames.of(text)
        # the target and the functions of its file it calls, as the prefilter reads them
        return code is None or any(names & _NEEDS for names in code.reached(attrs))
    return False


def _calls_out(summary, classes, refs) -> set:
    """Which of `refs` a method of one of `classes` (not `__init__`), or a function of the file
    it calls, calls (the summary's calls outside the file's own regions): before the file is
    parsed with LibCST."""
    pending = [key for key in summary.functions if key.count(".") == 1
               and key.split(".")[0] in classes and not key.endswith(".__init__")]
    seen = set(pending)
    found: set = set()
    while pending:
        function = summary.functions.get(pending.pop())
        if function is None:
            continue
        found.update(call.ref for call in function.calls if call.kind == "call" and call.ref in refs)
        for key in function.local:
            if key not in seen:
                seen.add(key)
                pending.append(key)
    return found


def _activation(expr, frame, values, depth: int = 0) -> bool:
    """`expr` is computed from an output of the module's own submodules or methods
    (`self.transformer(ids)`, through dtype-keeping ops and the locals the walk has seen
    assigned): the evidence another file is told about. A bare parameter, a setting
    (`self.window`) or another call's result is float16 only by the scope's reading
    (half_values: any tensor-looking value of a float16 module), which stays in this file."""
    if depth > 6:
        return False
    expr = unparen(expr)
    if isinstance(expr, cst.BinaryOperation):
        return _activation(expr.left, frame, values, depth + 1) or _activation(expr.right, frame, values, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return _activation(expr.expression, frame, values, depth + 1)
    for node in data_chain(expr, frame):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            return True
        if isinstance(node, cst.Name):
            assigned = values.assigned_value(node.value, frame)
            return assigned is not None and _activation(assigned, frame, values, depth + 1)
    return False


def _constructor(frame) -> bool:
    """Code of an `__init__`: its parameters are settings (`dim`, `eps`), not activations."""
    function = frame.function
    return function is not None and function.name == "__init__"
