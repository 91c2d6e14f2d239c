"""A dict display read by a literal key (issue 26), for the class flow (classvalues.py): the entry
that key names, not every entry. segment-anything's (and MobileSAM's, Grounded-SAM's) builder
module is the shape:

    sam_model_registry = {"default": build_sam_vit_h, "vit_h": build_sam_vit_h, "vit_t": build_sam_vit_t}
    sam = sam_model_registry["vit_t"](checkpoint=path)      # build_sam_vit_t's model only

    def build_sam(name, checkpoint=None):                     # a parameter every call gives a
        return sam_model_registry[name](checkpoint)           # literal: those keys' entries
    build_sam("vit_t")

Field-sensitive on literal string keys only: the key is a string literal, or a name whose every
value is one (bound once to a literal, or a parameter of a module-level function every call of
the project passes a literal or leaves to a literal default: string_sources.py, not a configured
value such as an argparse option). A dict whose keys are not all literal strings, a key any other
way: every entry, as before. A literal key the dict does not hold selects nothing (the lookup
raises `KeyError`)."""

from __future__ import annotations

import ast
from typing import FrozenSet, Optional

from amplint.analysis.project.string_sources import string_values


def selected_items(cv, path: str, key: str, index, thing) -> Optional[list]:
    """The items of dict `thing` (("tup", file, function, items, ("keys", ...))) that subscript key
    `index` (a flowvalues `_key`: a string, or ("local", name)) in function `key` of `path` may
    select; None where every item may be read."""
    if len(thing) != 5 or thing[4][:1] != ("keys",):
        return None
    names = _literal_keys(cv, path, key, index)
    if names is None:
        return None
    return [item for item, name in zip(thing[3], thing[4][1:]) if name in names]


def _literal_keys(cv, path: str, key: str, index) -> Optional[FrozenSet[str]]:
    if type(index) is str:
        return frozenset((index,))
    if type(index) is not tuple or index[:1] != ("local",):
        return None
    memo = cv.__dict__.setdefault("_dict_keys", {})
    question = (path, key, index[1])
    if question not in memo:
        found = string_values(cv.strings, path, key, ast.Name(id=index[1], ctx=ast.Load()))
        memo[question] = None if found is None or found[1] else frozenset(value for value, _, _ in found[0])
    return memo[question]
