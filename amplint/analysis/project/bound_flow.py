"""The points-to resolver with atoms (pointsto_atoms.py: numbers, `torch.device` objects, models a
half cast returns) over the files the project pass's regions touch (pointsto_reach.scope: the
files that open a region, those a region reached, what they import, and the files importing a
region file), so that a value crosses files through every binding construct the resolver
models: Open-Sora's `get_device()` in utils/misc.py passed as `device=` by scripts/train.py to
the step in utils/train_utils.py whose autocast takes it as a device type.

Each file of the solve gets an EntryBoundSpans (its spans whose values hold atoms: read by
facts/bound_values.py instead of solving the file alone), and the file of a half cast whose
model another file reads under its autocast region gets an EntryHalfRead. Solved once, only
when a file of the scope shows an atom's source in its text."""

from __future__ import annotations

import os
import re
from typing import Dict, List, Set, Tuple

from amplint.analysis.facts.bound_values import EntryBoundSpans, EntryHalfRead
from amplint.analysis.parsing import python_tree
from amplint.analysis.project.half_inplace import floated_before_read
from amplint.analysis.project.pointsto_atoms import DTYPES, INSTANCE, OPEN, OTHER_NUMBER, atom_site
from amplint.analysis.project.pointsto_extract import extract
from amplint.analysis.project.pointsto_reach import _importers, module_name
from amplint.analysis.project.pointsto_solve import Solver
from amplint.analysis.project.region_spans import file_spans

# a source of an atom: a device object, a half cast, a number below 1e-3 or from 65504 up, a
# half dtype object
_DTYPE_OBJECT = r"torch\.(?:bfloat16|float16|half|float32|float64|float|double)\b"
_SOURCES = re.compile(r"device\(|\.half\(|\.bfloat16\(|\.to\(|\d[eE]-?\d|\d{5,}|" + _DTYPE_OBJECT)


def bound_value_entries(project, reached) -> None:
    """Puts the entries into `project.bound_values` (path -> entries) and every file of the solve
    into `project.bound_deps` (a value may come from any of them)."""
    try:
        regions = {p for p, s in project.summaries.items() if s is not None and s.regions}
        have = {p for p in regions | set(reached) if project.summaries.get(p) is not None}
        if not project.value_flow and len(_solved(have)) > DEFAULT_MAX_FILES:
            return  # the solve below would not run: the files added next only make it larger
        have |= _imported(project, reached)
        # no `ast` parse here (the call resolver's scope reads the region bodies': one parse more)
        paths = sorted(_solved(have | _importers(project, regions, have)))
    except (RecursionError, MemoryError):
        return
    if not paths or not _asked(project, paths):
        return
    if len(paths) > DEFAULT_MAX_FILES and not project.value_flow:
        return  # a large solve (detectron2's 40 files: ~0.4 s of a 2.4 s run) only with value-flow
    modules: Dict[str, str] = {}
    found: List[dict] = []
    for path in paths:
        named = module_name(project.display(path), project.package_prefix())
        if named is None or named[0] in modules:
            continue
        try:
            text = project.files[path]
            found.append(extract(text, named[0], named[1], atoms=True, tree=python_tree(text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError, KeyError, UnicodeError):
            continue
        modules[named[0]] = path
    if not found:
        return
    try:
        solver = Solver(found, atoms=True).solve()
    except (RecursionError, MemoryError):
        return
    shown = {m: project.display(p) for m, p in modules.items()}
    out: Dict[str, Set] = {}
    for facts in found:
        module = facts["module"]
        path = modules[module]
        spans = []
        lines = project.files.get(path, "").splitlines()
        for span, node in facts["spans"].items():
            values = solver.vals.get(node, ())
            atoms = tuple(sorted(v for v in values if v[:2] in ("R:", "X:") and v != OTHER_NUMBER))
            dtypes = tuple(sorted(v for v in values if v in DTYPES))
            if not (atoms or dtypes) or span[0] != span[2] or not 0 < span[0] <= len(lines):
                continue
            code = lines[span[0] - 1].encode("utf-8")[span[1]:span[3]].decode("utf-8", "replace")
            if len(dtypes) == 1 and OPEN not in values and dtypes[0] != "E:" + code:
                atoms += dtypes  # one dtype object on every path, not written as itself
            if atoms and any(v.startswith("I:") for v in values):
                atoms += (INSTANCE,)  # an instance of a project class (a half cast's model)
            if atoms and OPEN in values:
                atoms += (OPEN,)  # a caller the solve does not see may pass another value
            if atoms:  # an ordinary number, another dtype: something else
                spans.append((code, span[:2], atoms, node in solver.full or len(atoms) < len(values)))
        if not spans:
            continue
        # every other expression written the same way, holding no atom: the file's reader matches
        # expressions by their code, and must see that one of them does not hold it
        codes = {code for code, _s, _a, _o in spans}
        have = {start for _c, start, _a, _o in spans}
        for span in facts["spans"]:
            if span[:2] not in have and span[0] == span[2] and 0 < span[0] <= len(lines):
                code = lines[span[0] - 1].encode("utf-8")[span[1]:span[3]].decode("utf-8", "replace")
                if code in codes:
                    spans.append((code, span[:2], (), True))
                    have.add(span[:2])
        origins = {atom_site(a)[0] for _c, _s, atoms, _o in spans for a in atoms if a.startswith("X:") and "@" in a}
        paths_of = tuple(sorted((m, shown[m]) for m in origins if m in shown))
        out.setdefault(path, set()).add(EntryBoundSpans(module, tuple(sorted(spans)), paths_of))
        for entry in _half_reads(project, path, module, spans, modules):
            out.setdefault(modules[entry[0]], set()).add(entry[1])
    project.__dict__["bound_values"] = out
    # the files the objects come from (a number's value may pass through any file of the
    # solve; a cached result is checked against the rebuilt entries anyway)
    project.__dict__["bound_deps"] = {
        path: {modules[m] for e in entries if isinstance(e, EntryBoundSpans) for m, _shown in e.paths if m in modules}
        for path, entries in out.items()}


def _solved(paths) -> Set[str]:
    """The files of `paths` the solve reads."""
    return {p for p in paths if p.endswith((".py", ".pyi")) and os.path.basename(p) != "setup.py"}


# the files a solve covers by default; with `value-flow = true`, any number (its cost grows
# with them: ~10 ms a file, every run, warm runs too)
DEFAULT_MAX_FILES = 24

# a kind of value is worth the solve where a file makes it and a file may ask it (a cost gate
# on the text; what the solve finds is exact): a device type given by a name, a fill value or an
# eps given by a name, a half cast (a region reads what it returns)
_MAKES = {"device": re.compile(r"device\("), "half": re.compile(r"\.(?:half|bfloat16)\(\)|\.to\([^)]*(?:float16|half)"),
          "number": re.compile(r"\d[eE]-?\d|\d{5,}"), "dtype": re.compile(_DTYPE_OBJECT)}
_ASKS = {"device": re.compile(r"autocast\(\s*(?:device_type\s*=\s*)?(?![\"'\s])[A-Za-z_]"),
         "half": re.compile(r"autocast\("), "dtype": re.compile(r"autocast\([^)]*dtype\s*=\s*(?!torch\.)[A-Za-z_]|\.to\(\s*(?:dtype\s*=\s*)?(?!torch\.)[A-Za-z_][\w.]*\s*\)"),
         "number": re.compile(r"(?:fill_?|full)\([^()]*,\s*(?:self\.)?[A-Za-z_][\w.]*\s*\)|\+\s*[\w.]*eps\w*\b")}


def _asked(project, paths) -> bool:
    texts = [project.files.get(p, "") for p in paths]
    return any(any(_MAKES[k].search(t) for t in texts) and any(_ASKS[k].search(t) for t in texts) for k in _MAKES)


def _imported(project, reached) -> Set[str]:
    """The project modules that a region file, or a file the pass gave entries (code a region
    reaches, classes made half), imports anything from (a class whose method stores the cast
    model: GPT-SoVITS's `TTS` in TTS_infer_pack/TTS.py, imported by the fine-tune script; a
    config class whose default an eps comes from), beside the call resolver's narrower choice."""
    out: Set[str] = set()
    searched: Dict[Tuple[str, re.Pattern], bool] = {}  # a module many files import: searched once

    def finds(pattern: re.Pattern, target: str) -> bool:
        key = (target, pattern)
        if key not in searched:
            text = project.files.get(target, "") if target.endswith(".py") else ""
            searched[key] = pattern.search(text) is not None
        return searched[key]

    for path, summary in sorted(project.summaries.items()):
        if summary is None or not (summary.regions or path in reached):
            continue
        for _name, ref in sorted(summary.imports.items()):
            for target, _attrs in project._module_candidates(path, ref):
                package = ""
                if target.endswith("__init__.py"):
                    # `from models import get_models`: the module that defines the name, the
                    # package's own __init__ (Latte's get_models) or the one it re-exports from,
                    # with the __init__ that binds the name the importer reads
                    found = project.resolve_ref(path, ref)
                    package, target = target, found[0] if found is not None else ""
                if package and target != package and not finds(_MAKES["half"], target):
                    # a re-export only for a half cast: every atom of a framework's packages
                    # (detectron2's layers/ and structures/: 12 files) would take the solve past
                    # DEFAULT_MAX_FILES, which then gives nothing
                    break
                if finds(_SOURCES, target):
                    out.add(target)  # a module that makes an atom (its class, default, factory)
                    if package:
                        out.add(package)
                break
    return out


def _half_reads(project, path: str, module: str, spans, modules) -> List[Tuple[str, EntryHalfRead]]:
    """(module of the cast, entry) for each half cast of another file whose model a span of this
    file holds inside one of this file's active regions (the first such read per cast)."""
    summary = project.summaries.get(path)
    if summary is None or not summary.regions:
        return []
    opened, _ = file_spans(project, path)
    regions = [(info.origin.line, opened[info.origin.line]) for info in summary.regions if info.origin.line in opened]
    out: Dict[Tuple[str, int, int], EntryHalfRead] = {}
    for code, start, atoms, _other in sorted(spans):
        for atom in atoms:
            if not atom.startswith("X:half@"):
                continue
            origin, line, column = atom_site(atom)
            if origin == module or origin not in modules or (origin, line, column) in out:
                continue
            region = next((at for at, (a, b) in regions if a <= start[0] <= b), None)
            if region is None:
                continue
            if code.isidentifier() and floated_before_read(python_tree(project.files[path]), start[0], code):
                continue  # `model.float()` before the region: flow-insensitive points-to keeps the cast
            out[(origin, line, column)] = EntryHalfRead(
                line, column, "%s:%d" % (project.display(path), start[0]), code[:40],
                "%s:%d" % (project.display(path), region))
    return [(key[0], entry) for key, entry in out.items()]
