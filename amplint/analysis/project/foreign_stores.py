"""Which attributes a file's facts may read from its own stores another file also stores
(facts/foreign_stores.py): delivered as `EntryStoredElsewhere`, one per such name.

Asked only of the names a fact can read (cost, issue 34), found on the file's text:
- a file that writes a fill (AMP110) and may run under autocast (a region of its own or one the
  pass puts around its functions): `self.X = Y` where `Y` is a parameter whose default is a
  number beyond float16's range (param_defaults.attr_default). A file that fills only in half
  modules is not asked: there the constructor default is read as before;
- a file that writes `autocast`: a module-level `NAME = torch.<dtype>` (any alias of torch) read
  as the region's dtype (autocast_calls.py).
Another file stores the name when its text holds `.X = ...` (any receiver; annotated or augmented
too) or `setattr(<obj>, "X", ...)`. Comments and strings are not told apart: a name written that
way in one only makes the answer unknown. Each name is searched once per pass (a substring test
of each file's text first)."""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from amplint.analysis.data import dtype_rules as _R
from amplint.analysis.data.overflow import FP16_MAX
from amplint.analysis.data.triggers import FILL_NAMES
from amplint.analysis.facts.foreign_stores import EntryStoredElsewhere
from amplint.analysis.project.function_entries import may_run_under_autocast
from amplint.analysis.project.scan_view import files_holding, python_files
from amplint.analysis.project.text_tests import holds

_FILLS = re.compile(r"\b(?:%s)\s*\(" % "|".join(sorted(FILL_NAMES)))
_SELF_NAME = re.compile(r"\bself\.(\w+)\s*(?::[^=\n]*)?=\s*([A-Za-z_]\w*)\s*(?:#.*)?$", re.M)
# `torch.bfloat16` under any alias of torch (`th.bfloat16`)
_MODULE_TORCH = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=\s*[A-Za-z_]\w*\.(\w+)\s*(?:#.*)?$", re.M)
# a parameter with a numeric default: `inf=1e9`, `mask_fill: float = -1e9` (the number found
# from its `=`, the literal `re` scans for; the name read back from there)
_DEFAULT_NUMBER = re.compile(r"=\s*(-?\s*(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?=[,)\n])")
_PARAM_BEFORE = re.compile(r"[(,]\s*(\w+)\s*(?::[^=,()\n]*)?$")
_DTYPES = {name.split(".", 1)[1] for name in _R.DTYPE_NAMES}


def foreign_store_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryStoredElsewhere, ...]]:
    py = [p for p in paths if p.endswith(".py")]
    memo: Dict[str, List[str]] = {}
    found: Dict[str, Tuple[EntryStoredElsewhere, ...]] = {}
    for path in py:
        text = project.files.get(path) or ""
        names = candidates(text, lambda: may_run_under_autocast(project, path), holds(project, path, "autocast"))
        if not names:
            continue
        entries = []
        for name in sorted(names):
            if name not in memo:
                memo[name] = _storing_files(project, py, name)
            where = next((p for p in memo[name] if p != path), None)
            if where is not None:
                entries.append(EntryStoredElsewhere(name, project.display(where)))
        if entries:
            found[path] = tuple(entries)
    return found


def candidates(text: str, under_region: Callable[[], bool] = lambda: True,
               autocast: Optional[bool] = None) -> Set[str]:
    """The attribute names the facts of a file with this text may read from its own stores
    (`under_region`: whether the file may run under autocast, asked of a file without `autocast`
    before its text is scanned for a fill: a dict lookup, where the scans read the whole text)."""
    names: Set[str] = set()
    if autocast is None:  # else `"autocast" in text`, answered for the pass (text_tests.py)
        autocast = "autocast" in text
    fills = (autocast or under_region()) and ("fill" in text or "full" in text) \
        and _FILLS.search(text) is not None
    if not (fills or autocast):
        return names
    if fills:
        big = set()
        for match in _DEFAULT_NUMBER.finditer(text):
            if _beyond_half(match.group(1)):
                before = _PARAM_BEFORE.search(text, max(0, match.start() - 80), match.start())
                if before is not None:
                    big.add(before.group(1))
        names.update(attr for attr, value in _SELF_NAME.findall(text) if value in big)
    if autocast:
        names.update(name for name, dtype in _MODULE_TORCH.findall(text) if dtype in _DTYPES)
    return names


def _storing_files(project, paths: Sequence[str], name: str) -> List[str]:
    """The files (at most two) whose text stores `.name` on some object. Two patterns, each
    starting with its literal (`re` scans for it; an alternation would not)."""
    store = re.compile(rf"\.{re.escape(name)}\s*(?::[^=\n]*)?(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)")
    setter = re.compile(rf"setattr\s*\([^,()]+,\s*[\"']{re.escape(name)}[\"']")
    needle = "." + name
    quoted = (f'"{name}"', f"'{name}'")
    found: List[str] = []
    holding, python = files_holding(project, name), python_files(project)  # (the pass's one scan of the word)
    for path in paths:
        if path in python:
            if path not in holding:
                continue
            text = project.files.get(path) or ""
        else:  # (not in the scan: tested here)
            text = project.files.get(path) or ""
            if name not in text:  # in each of the needles: one scan rules most texts out
                continue
        # `setattr` first: rare in code (the mixed monorepo tree's `inf`: 103 of its 1,603
        # holders), where the quoted name's two scans read each holder twice
        if needle in text and store.search(text) is not None \
                or "setattr" in text and any(q in text for q in quoted) and setter.search(text) is not None:
            found.append(path)
            if len(found) == 2:
                break
    return found


def _beyond_half(number: str) -> bool:
    try:
        return abs(float(number.replace(" ", "").replace("_", ""))) > FP16_MAX
    except ValueError:
        return False
