"""`.apply(fn)` as a half cast (issue 26 "Functions and classes as values"): guided-diffusion's
`UNetModel.convert_to_fp16` runs `self.input_blocks.apply(convert_module_to_f16)`, with the
converter defined in another module (fp16_util.py: `l.weight.data = l.weight.data.half()`).
`module.apply(fn)` calls `fn` on the module and on every submodule, so when `fn` is a project
function that casts the module it is given (`l.half()`, `l.weight.data.half()`,
`l.to(torch.float16)` on its first parameter), the module tree `.apply` is called on becomes
half, as after `module.half()`. The converter is found through the class flow wherever it is
defined; one outside the linted files is not guessed from its name. Like the statement
`model.half()`, a call in a method body counts whether or not the method is called."""

from __future__ import annotations

import re
from typing import FrozenSet, Iterable, Iterator, List, Optional, Tuple

from amplint.analysis.project.halfspread import STATEMENT_CASTS


def applied(flow, path: str, facts) -> Iterator[Tuple[str, tuple, str]]:
    """(function key, module value, dtype) for each `value.apply(fn)` of the file's flow facts
    whose `fn` may be a project function casting the module it is given to half."""
    for key in sorted(facts.functions):
        for last, callee, args, _line in facts.functions[key].calls:
            if last != "apply" or callee[0] != "attr" or callee[2] != "apply" or len(args) != 1 or args[0][0] != 0:
                continue
            dtypes = sorted({
                dtype for thing in flow.values(path, key, args[0][1])
                if thing[0] == "func" for dtype in [converter_dtype(flow, thing[1], thing[2])] if dtype
            })
            if dtypes:
                yield key, callee[1], "float16" if "float16" in dtypes else dtypes[0]


def converter_dtype(flow, path: str, key: str) -> Optional[str]:
    """The half dtype function `key` of `path` casts its first parameter (or an attribute of
    it: `l.weight.data.half()`) to, written as a statement; None when it casts none."""
    facts = flow._flow(path)
    function = facts.functions.get(key) if facts is not None else None
    if function is None or not function.params:
        return None
    param = ("local", function.params[0])
    for receiver, attr, _text, _line in function.dynamic:
        if attr in STATEMENT_CASTS and _root(receiver) == param:
            return STATEMENT_CASTS[attr]
    return None


def _root(value):
    while type(value) is tuple and value and value[0] in ("attr", "sub"):
        value = value[1]
    return value


_APPLY = re.compile(r"\.apply\(\s*([A-Za-z_][\w.]*)\s*\)")
_CAST_WORDS = ("half", "Half", "float16", "bfloat16")


def may_apply_converter(flow, text: str) -> bool:
    """Whether the file's text holds a `.apply(name)` whose `name` may be a converter: a name
    no project function has (a local alias, an attribute set elsewhere: it is followed), or a
    function with a cast word in its body's text. `self.apply(self._init_weights)` in a timm
    model is not, and its file is then not summarised for it."""
    if ".apply(" not in text:
        return False
    defined, casting = _function_names(flow)
    for match in _APPLY.finditer(text):
        name = match.group(1).rsplit(".", 1)[-1]
        if name not in defined or name in casting:
            return True
    return False


def _function_names(flow) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(project function names; those whose body text holds a cast word), read once, for the
    names some `.apply(name)` of the project applies, the only ones `may_apply_converter` asks
    about: only their `def`s are read (`_defining` finds them), not every function's."""
    memo = flow.__dict__.get("_converter_names")
    if memo is None:
        defined, casting = set(), set()
        applied = _applied_names(flow)
        defining = _defining(applied)
        for path in _files_calling_any(flow, applied) if defining is not None else ():
            text = flow.p.files[path]
            if "def" not in text:
                continue
            for match in defining.finditer(text):
                header = _header(text, match.start())
                if header is None:
                    continue
                name, indent, begin = match.group(1), header, match.end()
                defined.add(name)
                end = len(text)
                for later in _iter_defs(text, begin):  # the next def at this indentation or less
                    if later[0] <= indent:
                        end = later[2]
                        break
                if any(text.find(word, begin, end) != -1 for word in _CAST_WORDS):
                    casting.add(name)
        memo = flow.__dict__["_converter_names"] = (frozenset(defined), frozenset(casting))
    return memo


def converting_files(flow) -> FrozenSet[str]:
    """The files for whose text `may_apply_converter` holds (the half casts' `.apply(fn)`)."""
    return frozenset(path for path in _applying_files(flow) if may_apply_converter(flow, flow.p.files[path]))


def _applying_files(flow) -> List[str]:
    """The files whose text holds `.apply(`, in the project's order, found once."""
    found = flow.__dict__.get("_applying_files")
    if found is None:
        found = [path for path in _files_calling_any(flow, ("apply",)) if ".apply(" in flow.p.files[path]]
        flow.__dict__["_applying_files"] = found
    return found


def _files_calling_any(flow, words: Iterable[str]) -> List[str]:
    """The files (in the project's order) that the flow's call-word index (call_words.py) says
    call one of `words` (`word(` after no word character: `.apply(`, `def name(` are such
    calls), when the class flow has built that index; else every file (what a scan per word
    would cost more than the caller's own test of each text). Counts the texts it hands out
    (`converter_texts`: tests count the work)."""
    indexed = getattr(flow, "indexed_calls", None)
    found = [indexed(word) for word in words] if indexed is not None else [None]
    if any(paths is None for paths in found):
        paths = list(flow.p.python)
    else:
        wanted = set().union(*found)
        paths = [path for path in flow.p.python if path in wanted]
    flow.__dict__["converter_texts"] = flow.__dict__.get("converter_texts", 0) + len(paths)
    return paths


def _applied_names(flow) -> List[str]:
    """The names some `.apply(name)` of the project applies (the last part of a dotted one)."""
    applied = set()
    for path in _applying_files(flow):
        applied.update(match.group(1).rsplit(".", 1)[-1] for match in _APPLY.finditer(flow.p.files[path]))
    applied.discard("")  # `.apply(x.)`: no def has that name
    return sorted(applied)


def _defining(applied: List[str]) -> Optional["re.Pattern[str]"]:
    """`def name(` for every name of `applied` (None: no such name). A match `_iter_defs` takes
    (`_header`) is one of its defs: the name is the whole word before `(`, as `_DEF_TAIL`'s, and
    `_iter_defs` reaches every `def` not inside a def's header."""
    if not applied:
        return None
    return re.compile(r"def[ \t]+(%s)[ \t]*\(" % "|".join(map(re.escape, applied)))


_DEF_TAIL = re.compile(r"def[ \t]+(\w+)[ \t]*\(")


def _iter_defs(text: str, at: int = 0):
    """(indentation, name, start, end) of each match of `_DEF` (`^([ \\t]*)(?:async[ \\t]+)?def...`,
    re.M), looked for only where `def` is written: the line before it must be spaces and tabs,
    then `async` and spaces or tabs, or nothing.
    From position `at` on (the end of one of them, or 0)."""
    at = text.find("def", at)
    while at != -1:
        tail = _DEF_TAIL.match(text, at)
        if tail is not None:
            indent = _header(text, at)
            if indent is not None:
                yield indent, tail.group(1), text.rfind("\n", 0, at) + 1, tail.end()
                at = text.find("def", tail.end())
                continue
        at = text.find("def", at + 3)


def _header(text: str, at: int) -> Optional[int]:
    """The indentation of the `def` at `at` when the line before it is spaces and tabs, then
    `async` and spaces or tabs, or nothing; else None."""
    line = text.rfind("\n", 0, at) + 1
    prefix = text[line:at]
    rest = prefix.lstrip(" \t")
    if not rest or (rest.startswith("async") and len(rest) > 5 and not rest[5:].strip(" \t")):
        return len(prefix) - len(rest)
    return None
