"""Public functions and methods every call of which is in their own file (issue 26, the dtype of
a parameter from every call site; RULES.md "Dtype of values").

The dtype fact binds a parameter to what every call passes (facts/dtype_params.py). Within a
file it trusts that `_name` is the file's own; a public name (fish-speech's `def
logprob(logits)`, BEVFormer's `def expand(self, prev_bev)`) may be called by any other file, and
then the file's calls are not all its calls. The project pass (project/local_callers.py) names,
per file, the public `def`s that no other project file mentions at all (not called, imported,
passed, subclassed-and-overridden nor written in a string or a config): their calls are the
file's, and dtype_params binds them as it binds a private name. Linted without a project pass
(no entry), a public name stays unbound."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet


@dataclass(frozen=True)
class EntryCalledHere:
    """The public `def` names of the file that no other project file mentions."""

    names: FrozenSet[str]


def called_here(entries) -> FrozenSet[str]:
    found: FrozenSet[str] = frozenset()
    for entry in entries or ():
        if isinstance(entry, EntryCalledHere):
            found = found | entry.names
    return found
