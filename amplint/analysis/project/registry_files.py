"""Which files a build of one registry must read (issue 34): a file registers into a registry
only through a name that may denote it, so a build of mmdetection's `TRANSFORMER` registry
need not read the 200 files registering heads, losses, pipelines and datasets.

Told from the texts, as a superset of what the class flow resolves:
- a registration (`@X.register_module()`, `X.register(name)(Net)`, `a.b.X.register_module(...)`)
  is written through a name, the last one before `.register`; one written otherwise
  (`make().register_module()`, `REGS[k].register(...)`, a comment before the attribute) may
  register anywhere: its file is read for every registry;
- the class flow resolves that name to a registry only through bindings of names: imports,
  which keep the name unless `as` renames it, and statements that bind a name (at module level,
  a stored attribute `self.reg = X`): its value, `("reg", (file, NAME))` or an external
  `("reg", "pkg.mod.NAME")`, ends at the registry's own name. So the names that may denote a
  registry are its own name and, from there, every name bound by `... X as N` or by a
  statement mentioning such a name (a module-level statement whole, including its blocks and
  continuation lines; in a function or a class, the line), until nothing new is bound.
A file none of whose registrations is written through such a name cannot register into the
registry: its registrations are not read for that build."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Set

_SPACE = " \t\\\r\n\x0c"
_ATTRIBUTE = re.compile(r"\.[ \t\\\r\n\x0c]*register(?:_module)?\b")  # `.register`, `.register_module`
_AFTER_BREAK = re.compile(r"\n[ \t\\\r\n\x0c]*register(?:_module)?\b")
_FOR = re.compile(r"\bfor\b(.*?)\bin\b")
# two words with only spaces between them, or a word after a closing bracket: never in a `for`
# target outside its brackets (`for CLVP. It was proposed in` in a docstring is prose)
_WORD_AFTER_WORD = re.compile(r"\w[ \t\x0c]+\w")
_WALRUS = re.compile(r"([A-Za-z_]\w*)\s*:=")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_AS_AFTER = re.compile(r"\s+as\s+([A-Za-z_]\w*)")
_STATEMENT_START = re.compile(r"^[^\s)\]}#]", re.M)  # a line starting in the first column
# the same starts after the first line, led by the literal newline (which the engine skips to;
# `^` is tried at every position)
_LINE_START = re.compile(r"\n[^\s)\]}#]")
_UNKNOWN = None  # a registration not written through a name: read for every registry
# names that may denote one registry before the search stops telling files apart (on mmdetection
# 2.28 each registry built has at most 2: its own name and `__all__`)
MAX_ALIASES = 32
_CHUNK = 64  # texts searched for one word before the next word's turn (names)


def registration_heads(text: str) -> Optional[FrozenSet[str]]:
    """The names the text's registrations are written through (`HEADS` in
    `@HEADS.register_module()`); None when one may be written otherwise."""
    heads: Set[str] = set()
    for match in _ATTRIBUTE.finditer(text):
        end = match.start()
        while end > 0 and text[end - 1] in _SPACE:
            end -= 1
        start = end
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        if start == end:
            return _UNKNOWN  # `make().register_module()`, `REGS[k].register(...)`
        heads.add(text[start:end])
    for match in _AFTER_BREAK.finditer(text):
        end = match.start()
        while end > 0 and text[end - 1] in _SPACE:
            end -= 1
        if end > 0 and text[end - 1] != ".":
            return _UNKNOWN  # `X.  # why\n    register_module`: an attribute after a comment
    return frozenset(heads)


def _targets(line: str) -> Set[str]:
    """The names a line may bind by `=`: those before its last `=` outside brackets opened on
    the line (`a = b = `, `a, b = `, `N: T = `, `x.N = `, `d[N] = `), but receivers and callees."""
    depth, last = 0, -1
    for at, char in enumerate(line):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "#":
            break
        elif char == "=" and depth <= 0 and line[at - 1:at] not in ("=", "!", "<", ">") \
                and line[at + 1:at + 2] != "=":
            last = at
    if last < 0:
        return set()
    return {m.group(0) for m in _IDENT.finditer(line, 0, last) if line[m.end():m.end() + 1] not in (".", "(")}


def _for_targets(segment: str) -> Iterator[str]:
    """The text between each `for` and the first `in` after it on its line that may be a `for`
    target; after a `for` whose text cannot be one (prose), the next `for` is tried from there
    (so that `"wait for all" in s or [t for t in u]` still yields `t`)."""
    at = 0
    while True:
        match = _FOR.search(segment, at)
        if match is None:
            return
        targets = match.group(1)
        if _outside_brackets_prose(targets):
            at = match.start() + 3
            continue
        yield targets
        at = match.end()


def _outside_brackets_prose(targets: str) -> bool:
    """Two words side by side outside brackets: no target list of Python has them."""
    if not _WORD_AFTER_WORD.search(targets):
        return False
    depth, outside = 0, []
    for char in targets:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth <= 0:
            outside.append(char)
        if depth <= 0 and char in ")]}":
            outside.append(" ")  # `(a) b`: a word after a closed bracket is no target either
    return _WORD_AFTER_WORD.search("".join(outside)) is not None


def _bound(segment: str) -> Set[str]:
    """The names a statement may bind: `N = ...`, `a = b = ...`, `for N in ...`, `(N := ...)`."""
    if "=" not in segment and "for" not in segment:
        return set()
    found = set(_WALRUS.findall(segment)) if ":=" in segment else set()
    if "for" in segment:
        for targets in _for_targets(segment):
            found.update(_IDENT.findall(targets))
    for line in segment.split("\n"):
        if "=" in line:
            found |= _targets(line)
    return found


def _occurrences(text: str, word: str):
    """Where `word` stands as a word (a plain search: a pattern starting with `\\b` is not one)."""
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        if not (at and (text[at - 1].isalnum() or text[at - 1] == "_")) and not (
                end < len(text) and (text[end].isalnum() or text[end] == "_")):
            yield at
        at = text.find(word, end)


def statement_starts(text: str) -> Iterator[int]:
    """Where `_STATEMENT_START` matches, in order."""
    if _STATEMENT_START.match(text):
        yield 0
    for match in _LINE_START.finditer(text):
        yield match.start() + 1


def names_bound_from(text: str, word: str) -> Set[str]:
    """The names this text may bind to a value written with `word`: `X as N` wherever it is;
    any name a module-level statement mentioning it binds (the whole statement, its blocks and
    continuation lines included); in a function or a class, any name its line binds."""
    found: Set[str] = set()
    # the statement starts, read only as far as the last mention's statement needs (one past
    # it): `__all__`, at the top of ~2,800 files of the mixed tree, read each file whole before
    starts: List[int] = []
    unread = statement_starts(text)
    statements: Dict[int, Set[str]] = {}
    for at in _occurrences(text, word):
        after = _AS_AFTER.match(text, at + len(word))
        if after is not None:  # `import X as N`, `with X as N`
            found.add(after.group(1))
        while unread is not None and (not starts or starts[-1] <= at):
            start = next(unread, None)
            if start is None:
                unread = None
            else:
                starts.append(start)
        index = bisect_right(starts, at) - 1
        start = starts[index] if index >= 0 else 0
        if text.startswith(("def ", "class ", "async ", "@"), start):  # a function's or class's own line
            line = text.rfind("\n", 0, at) + 1
            stop = text.find("\n", at)
            found |= _bound(text[line:stop if stop != -1 else len(text)])
            continue
        if start not in statements:
            end = starts[index + 1] if index + 1 < len(starts) else len(text)
            statements[start] = _bound(text[start:end])
        found |= statements[start]
    return found


class RegistryFiles:
    """The registry search's files, for one registry at a time. `texts`: path -> source."""

    def __init__(self, python: Iterable[str], texts) -> None:
        self._python = list(python)
        self._texts = texts
        self._heads: Dict[str, Optional[FrozenSet[str]]] = {}
        self._aliases: Dict[str, Optional[FrozenSet[str]]] = {}
        # word -> [the next text to search for it, the names the texts before it bind from it]:
        # several registries share aliases (`HEADS = NECKS = MODELS`, a block naming them
        # all), and a search stopped past MAX_ALIASES goes on where the last one stopped
        self._scans: Dict[str, list] = {}
        self.texts_searched = 0  # texts searched for a name's bindings (counted by the tests)

    def heads(self, path: str) -> Optional[FrozenSet[str]]:
        if path not in self._heads:
            self._heads[path] = registration_heads(self._texts[path])
        return self._heads[path]

    def names(self, name: str) -> Optional[FrozenSet[str]]:
        """The names that may denote a registry whose own name is `name`; None when they pass
        MAX_ALIASES: a registry named inside a large module-level block (`if __name__ ==
        "__main__":`, a `try:` around half a module) may stand for every name the block binds,
        and each of those for more, so that the search would read every text once per word of
        the tree. Then no file is told apart for that registry (all are read, as before)."""
        # The answer is the closure's (None when it passes MAX_ALIASES), whatever the order its
        # words are searched in; each text is searched for a word once for every registry. The
        # words are searched together, _CHUNK texts at a time each: a closure passing the bound
        # through a word with many bindings (`__all__`, in ~2,800 texts of a mixed tree) stops
        # once that word is reached, not after every word before it has read the whole tree.
        if name in self._aliases:
            return self._aliases[name]
        names, pending = {name}, {name: 0}  # word -> how many of its scan's names were taken
        while pending:
            for word in list(pending):
                scan = self._scans.setdefault(word, [0, []])
                if pending[word] == len(scan[1]) and not self._search(word, scan):
                    del pending[word]  # every text searched, every name taken
                    continue
                taken, pending[word] = pending[word], len(scan[1])
                for bound in scan[1][taken:]:
                    if bound not in names:
                        names.add(bound)
                        pending[bound] = 0
                        if len(names) > MAX_ALIASES:
                            self._aliases[name] = None
                            return None
        found = self._aliases[name] = frozenset(names)
        return found

    def _search(self, word: str, scan: list) -> bool:
        """Searches the next _CHUNK texts of `word`'s scan, adding the names they bind from it;
        False when every text was searched already."""
        if scan[0] >= len(self._python):
            return False
        # `word in text`, as re's literal search: on the mixed monorepo tree's registry names
        # (`HEADS`, `__all__`: a first character rare in code) ~1.5x faster than `in`
        mentions = re.compile(re.escape(word)).search
        stop = min(scan[0] + _CHUNK, len(self._python))
        for path in self._python[scan[0]:stop]:
            text = self._texts[path]
            if mentions(text) is not None:
                self.texts_searched += 1
                scan[1].extend(sorted(names_bound_from(text, word)))
        scan[0] = stop
        return True

    def for_registry(self, key: tuple, paths: List[str]) -> List[str]:
        """Those of `paths` (in their order) that may register into the registry `key` (a
        class flow "reg" value): all of them when the registry's names are too many to tell."""
        names = self.names(registry_name(key))
        if names is None:
            return list(paths)
        out = []
        for path in paths:
            heads = self.heads(path)
            if heads is None or not heads.isdisjoint(names):
                out.append(path)
        return out


def registry_name(key: tuple) -> str:
    """The registry's own name: `("reg", (file, "HEADS"))`, `("reg", "mmcv.cnn.MODELS")`."""
    where = key[1]
    return where[1] if isinstance(where, tuple) else str(where).rsplit(".", 1)[-1]
