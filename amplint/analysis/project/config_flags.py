"""Configured flags a function tests (issue 26): `if args.model.low_memory:` in nanoT5's
get_model, `if cfg.TRAIN.HALF:` in a pycls builder. Whether the code under such a test runs is
the configuration's to say, not a call's: the test is taken as on only where the project's own
configs turn it on, with a truthy literal under the same key path:

- two keys or more (`args.model.low_memory` -> `("model", "low_memory")`): a YAML mapping
  whose key path ends with them (`model:\\n  low_memory: true`), or a Python assignment of the
  dotted path (yacs `_C.TRAIN.HALF = True`, ml_collections `config.model.low_memory = True`);
- one key (`args.half`): an argparse option `--half` whose literal `default=` is true, or
  whose action is `store_false`.

A key no config sets, or sets only to falsy literals (`false`, `0`, `null`, `None`), is not
taken: an unknown flag stays unknown (an argparse `store_true` option is off unless the user
asks). Read with `ast` and the config texts only when a fact asks about one function."""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Tuple

from amplint.analysis.project.frameworks import yaml_keys
from amplint.analysis.project.string_sources import function_node

_TRUE = frozenset({"true", "True", "yes", "on", "1"})


def flags_on(project, path: str, key: str) -> Tuple[Tuple[str, str], ...]:
    """(test text, cite of the config that turns it on) for each `if a.b.c:` test of function
    `key` of `path` whose key path the project's configs set to a truthy literal."""
    text = project.files.get(path) or ""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    scope = function_node(tree, key)
    if scope is None:
        return ()
    out = []
    for node in ast.walk(scope):
        if type(node) is not ast.If:
            continue
        keys = _attribute_keys(node.test)
        if keys is None:
            continue
        cite = _turned_on(project, keys)
        if cite is not None:
            out.append((ast.unparse(node.test), cite))
    return tuple(sorted(set(out)))


def _attribute_keys(test: ast.expr) -> Optional[Tuple[str, ...]]:
    """`args.model.low_memory` -> ("model", "low_memory"); None for anything but an attribute
    chain on a name."""
    keys: List[str] = []
    while type(test) is ast.Attribute:
        keys.append(test.attr)
        test = test.value
    if type(test) is not ast.Name or not keys or test.id == "self":
        return None
    return tuple(reversed(keys))


def _turned_on(project, keys: Tuple[str, ...]) -> Optional[str]:
    last = keys[-1]
    if len(keys) == 1:
        return _argparse_on(project, last)
    assign = re.compile(r"\.%s\s*=\s*(\w+)\s*(?:#.*)?$" % r"\.".join(map(re.escape, keys)), re.M)
    for path in sorted(project.files):
        text = project.files[path]
        if last not in text:
            continue
        if path.endswith((".yaml", ".yml")):
            for key_path, value, line in yaml_keys(text):
                if key_path[-len(keys):] == keys and value in _TRUE:
                    return f"{project.display(path)}:{line}"
        elif path.endswith(".py"):
            for match in assign.finditer(text):
                if match.group(1) in _TRUE and not _commented_out(text, match.start()):
                    return f"{project.display(path)}:{text.count(chr(10), 0, match.start()) + 1}"
    return None


def _argparse_on(project, dest: str) -> Optional[str]:
    option = re.compile(r"add_argument\(\s*(?:['\"]-\w['\"]\s*,\s*)?['\"]--%s['\"]([^)]*)\)"
                        % dest.replace("_", "[-_]"))
    for path in project.python:
        text = project.files[path]
        if "add_argument" not in text or dest not in text.replace("-", "_"):
            continue
        for match in option.finditer(text):
            if _commented_out(text, match.start()):
                continue
            rest = match.group(1)
            if re.search(r"\bdefault\s*=\s*True\b", rest) or re.search(r"\baction\s*=\s*['\"]store_false['\"]", rest):
                return f"{project.display(path)}:{text.count(chr(10), 0, match.start()) + 1}"
    return None


def _commented_out(text: str, start: int) -> bool:
    """The match at `start` follows a `#` on its line: commented-out code (`# _C.TRAIN.HALF =
    True` above the live `False`), which sets nothing."""
    return "#" in text[text.rfind("\n", 0, start) + 1:start]
