"""The methods a half class inherits from project classes of other files: a module class
turned half (classflow's `half_instances`) runs the methods of its bases and mixins that it
does not override as fp16 code, wherever they are defined (SwinIR's `forward_tiled`, from a
`TiledInferenceMixin` in utils/). Resolution follows the project's MRO lookup
(`project.method`, first base first): a method counts for the base it resolves to, so one the
half class or a nearer base overrides is not taken. Bases in the half class's own file are
Fp16Analysis's (facts/fp16.py); this names those of other files, as EntryHalfBase entries."""

from __future__ import annotations

from typing import Dict, List, Tuple

MAX_BASES = 16  # project classes followed up one half class's hierarchy

Half = Dict[Tuple[str, str], Tuple[str, str, str]]  # (file, class) -> (dtype, cite, file of the cast)
# (file of the base, base, dtype) -> (methods, cite, files the fact depends on)
Inherited = Dict[Tuple[str, str, str], Tuple[Tuple[str, ...], str, Tuple[str, ...]]]


def inherited_halves(project, half: Half) -> Inherited:
    out: Inherited = {}
    for (path, cls), (dtype, cite, where) in sorted(half.items()):
        for bpath, base in _bases(project, path, cls):
            if bpath == path:
                continue
            summary = project.summary(bpath)
            methods = tuple(
                name for name in summary.classes[base].methods
                if project.method(path, cls, name) == (bpath, f"{base}.{name}")
            )
            if not methods:
                continue
            key = (bpath, base, dtype)
            text = f"inherited by `{cls}` ({project.display(path)}); {cite}"
            known = out.get(key)
            if known is None:
                out[key] = (methods, text, (path, where))
            else:  # a second half class inheriting from it: the cite names the first
                merged = known[0] + tuple(m for m in methods if m not in known[0])
                out[key] = (merged, known[1], tuple(sorted(set(known[2]) | {path, where})))
    return out


def _bases(project, path: str, cls: str) -> List[Tuple[str, str]]:
    """The project classes `cls` derives from, nearest first (each once, bounded)."""
    found: List[Tuple[str, str]] = []
    pending = [(path, cls)]
    while pending and len(found) < MAX_BASES:
        where, name = pending.pop(0)
        summary = project.summary(where)
        info = summary.classes.get(name) if summary is not None else None
        for ref in info.bases if info is not None else ():
            target = project.resolve_ref(where, ref)
            if target is None or len(target[1]) != 1:
                continue
            base = (target[0], target[1][0])
            base_summary = project.summary(base[0])
            if base in found or base == (path, cls) or base_summary is None \
                    or base[1] not in base_summary.classes:
                continue
            found.append(base)
            pending.append(base)
    return found
