"""Which public `def`s of a file no other project file mentions, delivered as
`EntryCalledHere` (facts/local_callers.py): every call of such a function or method is in its
own file, so the dtype fact binds its parameters to what those calls pass
(facts/dtype_params.py), as it does for a private name.

Found on the texts, for the files the dtype fact can use it in: a file whose text names a half
dtype or a region (`.half(`, `float16`, `bfloat16`, `autocast`), its public names `def`d once and
written as a call again in the file (`name(` past the `def`). A name counts as mentioned by
another file when that file's text holds it as a whole word anywhere (code, string, comment,
config): a call, an import, a value passed on, an override in a subclass.

Cost (issue 34): each name is a substring scan of the other files' texts, stopped at the first
file that holds it; a name no other file holds reads them all. The pass scans at most
SCAN_BUDGET times the project's text in all or MIN_BUDGET characters, the larger (transformers:
53 MB of Python, a full scan a tenth of a second), and MAX_NAMES names; past that, no more entries: the names stay unbound,
as without a project."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from amplint.analysis.facts.local_callers import EntryCalledHere
from amplint.analysis.project.text_tests import ends_a_word, holds, starts_a_word

MAX_NAMES = 256
SCAN_BUDGET = 1  # full reads of the project's text, for every name of the pass together...
MIN_BUDGET = 16_000_000  # ...or this many characters, the larger (a small project's names all)

# "bfloat16" too, which "float16" finds; "autocast" and "half(" asked of the pass (text_tests.py)
_SIGNALS = ("half(", "float16")
_DEF = re.compile(r"def[ \t]+([A-Za-z]\w*)[ \t]*\(")


def local_caller_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryCalledHere, ...]]:
    texts = [(path, project.files.get(path) or "") for path in paths]
    budget = max(SCAN_BUDGET * sum(len(text) for _, text in texts), MIN_BUDGET)
    found: Dict[str, Tuple[EntryCalledHere, ...]] = {}
    asked = 0
    for path, text in texts:
        if not path.endswith(".py") or not (holds(project, path, "half(") or "float16" in text
                                            or holds(project, path, "autocast")):
            continue
        here: List[str] = []
        for name in _called_again(text):
            asked += 1
            if asked > MAX_NAMES or budget <= 0:
                break
            mentioned = False
            for other_path, other in texts:
                budget -= len(other)
                if other_path != path and _mentions(name, other):
                    mentioned = True
                    break
            if not mentioned and budget >= 0:
                here.append(name)
        if here:
            found[path] = (EntryCalledHere(frozenset(here)),)
        if asked > MAX_NAMES or budget <= 0:
            break
    return found


def lone_file_entries(paths: Sequence[str]) -> Dict[str, Tuple[EntryCalledHere, ...]]:
    """The entry of the one Python file of a run that has no other (no project pass runs):
    nothing else can call its public names."""
    python = [path for path in paths if path.endswith((".py", ".pyi"))]
    if len(python) != 1 or not python[0].endswith(".py"):
        return {}
    try:
        with open(python[0], encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return {}
    if "autocast" not in text and not any(signal in text for signal in _SIGNALS):
        return {}
    names = _called_again(text)
    return {python[0]: (EntryCalledHere(frozenset(names)),)} if names else {}


def _called_again(text: str) -> List[str]:
    """The public names the text `def`s once and writes as a call past that `def`."""
    counts: Dict[str, int] = {}
    for name in _DEF.findall(text):
        counts[name] = counts.get(name, 0) + 1
    called = []
    for name, count in sorted(counts.items()):
        if count == 1 and _calls_twice(name, text):
            called.append(name)
    return called


def _calls_twice(name: str, text: str) -> bool:
    r"""`len(re.findall(r"(?<!\w)" + name + r"\s*\(", text)) >= 2`, searched from the name's
    literal (a pattern led by a lookbehind is tried at every position): a match the lookbehind
    drops ends before any match it would keep could start (inside the name each character
    follows a word character; `\s*(` starts no name)."""
    found = 0
    for match in re.finditer(re.escape(name) + r"\s*\(", text):
        start = match.start()
        if starts_a_word(text, start):
            found += 1
            if found == 2:
                return True
    return False


def _mentions(name: str, text: str) -> bool:
    r"""Does `text` hold `name` as a whole word (`(?<!\w)name(?!\w)`)? Each occurrence tried."""
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        if starts_a_word(text, at) and ends_a_word(text, end):
            return True
        at = text.find(name, at + 1)
    return False
