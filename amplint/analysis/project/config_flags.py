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
    """The first `parser.add_argument("--dest", ...)` (or `dest="dest"`) whose literal default
    is true or whose action is `store_false`, read with `ast`: a `help=` with parentheses, a
    keyword on another line or a comment between the arguments reads as written."""
    for path in project.python:
        text = project.files[path]
        if "add_argument" not in text or dest not in text.replace("-", "_"):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if (type(node) is ast.Call and type(node.func) is ast.Attribute
                    and node.func.attr == "add_argument" and _option_dest(node) == dest
                    and _is_on(node)):
                return f"{project.display(path)}:{node.lineno}"
    return None


def _option_dest(call: ast.Call) -> Optional[str]:
    """What argparse stores the option under: `dest=` if given, else the first `--long` option
    with dashes as underscores (None for a positional or a non-literal name)."""
    for keyword in call.keywords:
        if keyword.arg == "dest":
            value = keyword.value
            return value.value if type(value) is ast.Constant and type(value.value) is str else None
    for arg in call.args:
        if type(arg) is not ast.Constant or type(arg.value) is not str:
            return None
        if arg.value.startswith("--"):
            return arg.value[2:].replace("-", "_")
    return None


def _is_on(call: ast.Call) -> bool:
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == "default" and type(value) is ast.Constant and value.value is True:
            return True
        if keyword.arg == "action" and type(value) is ast.Constant and value.value == "store_false":
            return True
    return False


def _commented_out(text: str, start: int) -> bool:
    """The match at `start` follows a `#` on its line: commented-out code (`# _C.TRAIN.HALF =
    True` above the live `False`), which sets nothing."""
    return "#" in text[text.rfind("\n", 0, start) + 1:start]
