"""The text questions of the class flow's call-site search (flowindex.py), answered from
indexes built once per project pass: which files call a name (`name(` with the name as a whole
word) and which bind it indirectly (`partial(x.name, ...)`, a subclass's `super().__init__(x)`,
a conditional class call). A search per name read every file's text again for each of the
hundreds of names a pass asks about (issue 34: fairseq's class flow asks ~300).

The answers are those of the per-name searches they replace (tests/test_call_words.py)."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Set, Tuple

from amplint.analysis.project.scan_view import texts_holding
from amplint.analysis.project.scan_view import python_texts
from amplint.analysis.project.text_tests import starts_a_word

# names scanned for before the call index is built: a scan reads every text for one name, the
# index reads each text once for them all and costs 3.3 scans on the mixed monorepo tree (5 to 8 on
# trees of a few hundred files, whose scans take 1 to 3 ms: benchmarks/text_indexes.py). Every
# tree whose pass asks anything asks more than that (mixed tree: 135 names; detectron2: ~20), so
# the scans before the index were spent for nothing there: 4 of them cost ~0.2 s of the mixed
# tree's pass (round 51). Was 8 (b75a108), then 4.
_SCANS_BEFORE_INDEX = 0

_WORD_CHAR = re.compile(r"\w")
_WORD = re.compile(r"\w+")


def calls(word: str, text: str) -> bool:
    """Does `text` match `\\bword\\s*\\(`? Searched without the leading `\\b`, which would keep
    the regex engine from skipping ahead to the literal (60x slower on a large tree)."""
    if word not in text:
        return False
    if not _WORD_CHAR.match(word):
        return re.search(r"\b" + re.escape(word) + r"\s*\(", text) is not None
    for match in re.finditer(re.escape(word) + r"\s*\(", text):
        start = match.start()
        if start == 0 or not _WORD_CHAR.match(text, start - 1):
            return True
    return False


def called_words(text: str) -> Set[str]:
    """Every word `w` for which `calls(w, text)`: the maximal runs of word characters that
    whitespace and `(` follow."""
    return {word[::-1] for word in _reversed_called_words(text) if word != _GROUP_CALLED}


# `(\w+)\s*\(` read backwards: a pattern that starts with the literal `(` lets the engine skip
# to each `(` (the forward pattern is tried at every position, 10x slower than this), and its
# greedy `\w+` takes the whole run of word characters before `\s*(`, as the forward match does
# (`_REVERSED_CALL`, below)
# an ASCII text's twins of the word patterns: `re.ASCII` word characters are the ASCII ones the
# Unicode `\w` matches, and `_ASCII_SPACE` is every ASCII character the Unicode `\s` matches
# (with `\x1c`-`\x1f`, which ASCII `\s` leaves out); they read ASCII words 10 to 15 % faster
# (the Unicode `\w` asks the character database for each character)
_ASCII_SPACE = r"[ \t\n\r\f\v\x1c-\x1f]"
_REVERSED_CALL_ASCII = re.compile(r"\(%s*(\w+|\))" % _ASCII_SPACE, re.ASCII)
# both patterns also take a `(` that whitespace then `)` follow (`\)\s*\(` read backwards), as the
# word `)`: where the text holds `_CALLED_GROUP`, with no other word lost (a `(` whose whitespace
# ends at `)` starts no word's match, and the match ends before the next `(`); the call index
# then tells which texts may hold a conditional class call (`CallWords._indirect_callers`),
# for a few ms of the index's ~170 (the mixed monorepo tree: 461 of its 5,338 texts)
_REVERSED_CALL = re.compile(r"\(\s*(\w+|\))")
_GROUP_CALLED = ")"


def _reversed_called_words(text: str) -> Set[str]:
    """`called_words(text)`, each word spelt backwards (the index keeps them so), and `)` where
    `_CALLED_GROUP.search(text)` finds `\\)\\s*\\(`."""
    return set((_REVERSED_CALL_ASCII if text.isascii() else _REVERSED_CALL).findall(text[::-1]))


class CallWords:
    """`files_calling(word)`: the paths (in their given order) whose text `calls(word, ...)`;
    `indirect(path)`: `indirect_binders` of a file; `binding_indirectly(word, plain)`: the
    paths for which `binds_indirectly(word, indirect(path), plain)`."""

    def __init__(self, paths: Iterable[str], texts: Mapping[str, str], project=None) -> None:
        self._paths = list(paths)
        self._texts = texts
        self._view = _View(self._paths, texts, project)
        self._scans = 0
        self._called: Dict[str, List[str]] = {}
        self._indexed = False
        self._binders: Dict[str, Tuple[FrozenSet[str], FrozenSet[str]]] = {}
        self._by_binder = None  # (partial: name -> paths, other: name -> paths)
        self._callers: Optional[Tuple[Set[str], Set[str], Set[str]]] = None  # (_indirect_callers)
        self.texts_indexed = 0  # files the call index read (tests count the work)
        self.scanned = 0  # files a per-name scan read

    def files_calling(self, word: str) -> List[str]:
        if not self._indexed and _WORD.fullmatch(word) is not None and self._scans >= _SCANS_BEFORE_INDEX:
            self._index()
        if self._indexed and _WORD.fullmatch(word) is not None:  # (`)` is not a word: never asked here)
            return list(self._called.get(word[::-1], ()))
        self._scans += 1
        self.scanned += len(self._paths)
        return [path for path, text in self._view.holding(word) if calls(word, text)]

    def _index(self) -> None:
        called: Dict[str, List[str]] = {}  # word spelt backwards -> paths
        for path, text in self._view.texts():
            self.texts_indexed += 1
            for word in _reversed_called_words(text):
                found = called.get(word)
                if found is None:
                    called[word] = [path]
                else:
                    found.append(path)
        self._called = called
        self._indexed = True

    def indirect(self, path: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """`indirect_binders` of the file, told what the call index knows of it where built."""
        found = self._binders.get(path)
        if found is None:
            callers = self._indirect_callers()
            if callers is None:
                found = indirect_binders(self._texts[path])
            else:
                found = indirect_binders(self._texts[path], path in callers[0], path in callers[1],
                                         path in callers[2])
            self._binders[path] = found
        return found

    def _indirect_callers(self) -> Optional[Tuple[Set[str], Set[str], Set[str]]]:
        r"""From the call index, when built (read once): (the paths calling a word that ends in
        `partial`, those calling `super`, those holding `\)\s*\(`). A text `_PARTIAL_OF` matches
        calls such a word (`partial\s*\(` ends the run of word characters before `\s*(`), one
        `_calls_super_init` holds calls `super`, one holding a conditional class call holds
        `\)\s*\(`: the other texts are not searched for them (the mixed monorepo tree: 140 of its
        5,338 texts call a `partial`, 2,807 `super`, 461 hold `\)\s*\(`)."""
        if not self._indexed:
            return None
        if self._callers is None:
            partial: Set[str] = set()
            for word, paths in self._called.items():  # (spelt backwards)
                if word.startswith("laitrap"):
                    partial.update(paths)
            self._callers = (partial, set(self._called.get("repus", ())), set(self._called.get(_GROUP_CALLED, ())))
        return self._callers

    def binding_indirectly(self, word: str, plain: bool) -> List[str]:
        if self._by_binder is None:
            partial: Dict[str, List[str]] = {}
            other: Dict[str, List[str]] = {}
            for path in self._paths:
                binds_partial, binds_other = self.indirect(path)
                for name in binds_partial:
                    partial.setdefault(name, []).append(path)
                for name in binds_other:
                    other.setdefault(name, []).append(path)
            self._by_binder = (partial, other)
        partial, other = self._by_binder
        found = partial.get(word, [])
        if plain or word not in other:
            return list(found)
        if not found:
            return list(other[word])
        both = set(found) | set(other[word])
        return [path for path in self._paths if path in both]


# `(\w+)\s*[,)]` read backwards, as `_REVERSED_CALL`: each run of word characters that
# whitespace and `,` or `)` follow (a name passed as the last part of an argument). Searched in
# the reversed text with its `)` written `,` (`passed_words`): a pattern led by the literal `,`
# is skipped to, one led by the class `[,)]` is tried at every position (1.3x slower)
_REVERSED_PASSED = re.compile(r"[,)]\s*(\w+)")
_REVERSED_COMMA = re.compile(r",\s*(\w+)")
_REVERSED_COMMA_ASCII = re.compile(r",%s*(\w+)" % _ASCII_SPACE, re.ASCII)  # (see `_ASCII_SPACE`)
# a per-name scan reads every text (`name in text`, at memory speed) and searches the few holding
# the name; the index reads every text with a regex, tried at each `,` and `)`, and costs 12 to
# 14 scans on the trees measured (benchmarks/text_indexes.py: the mixed monorepo tree's 5,338
# texts, detectron2, fairseq, small trees; 17 to 20 within the mixed tree's pass, where the scans
# read the pass's reduced copies). So names are scanned for until the scans have cost about what
# the index would (at most twice the cheaper of the two for any number of names): the mixed tree
# asks 10 names (10 scans, 0.25 s, for an index of ~0.5 s), fairseq 29, trees of a few hundred
# files 2 to 6. Was 0 (round 51, when a scan was measured at a quarter of the index)
_SCANS_BEFORE_PASSED_INDEX = 16


def passed_words(text: str) -> Set[str]:
    """`set(_REVERSED_PASSED.findall(text[::-1]))`: the words `w` (spelt backwards) that
    `\\s*[,)]` follows in `text` with no word character just before them."""
    pattern = _REVERSED_COMMA_ASCII if text.isascii() else _REVERSED_COMMA
    return set(pattern.findall(text[::-1].replace(")", ",")))


class PassedWords:
    """`files_passing(word)`: paths (in their given order) among which are all those whose text
    holds `word` as a whole word followed by `\\s*[,)]`: for a name of word characters exactly
    those, whether scanned for or read from the index; for another name (never indexed) those
    whose text holds it followed so, within a longer word too. callback_sites.py tries its whole
    pattern, which holds only where they do, on them. The first names are scanned for
    (`_SCANS_BEFORE_PASSED_INDEX`), the others read from each text's `passed_words`, computed
    once."""

    def __init__(self, paths: Iterable[str], texts: Mapping[str, str], project=None) -> None:
        self._paths = list(paths)
        self._texts = texts
        self._view = _View(self._paths, texts, project)
        self._scans = 0
        self._passed: Optional[List[Set[str]]] = None  # each path's `passed_words`, in order
        self.texts_read = 0  # texts the scans and the index read (tests count the work)

    def files_passing(self, word: str) -> List[str]:
        if _WORD.fullmatch(word) is None:  # (a name of word characters only is indexed)
            return self._scan(word)
        if self._passed is None and self._scans >= _SCANS_BEFORE_PASSED_INDEX:
            self.texts_read += len(self._paths)
            self._passed = [passed_words(text) for _path, text in self._view.texts()]
        if self._passed is not None:
            backwards = word[::-1]
            return [path for path, words in zip(self._paths, self._passed) if backwards in words]
        self._scans += 1
        return self._scan(word)

    def _scan(self, word: str) -> List[str]:
        before = re.compile(r"%s\s*[,)]" % re.escape(word))  # (led by the name: skipped to)
        self.texts_read += len(self._paths)
        if _WORD.fullmatch(word) is None:
            return [path for path, text in self._view.holding(word) if before.search(text)]
        # a name of word characters: only where it starts a word, as the index has it (a match
        # hides no other: one starting within it after a non-word character would start at the
        # whitespace, `,` or `)` that end it)
        return [path for path, text in self._view.holding(word)
                if any(starts_a_word(text, match.start()) for match in before.finditer(text))]


class _View:
    """The texts of the paths, in order, and the scans of them: the project pass's (text_tests'
    python_texts, scan_view's scans and memo: shared by every scan of the pass) where the paths
    are the project's Python files, else the texts as given, looked up once (the pass's `files`
    is a Mapping whose lookup is Python code, half a million lookups on a 5,000-file tree)."""

    def __init__(self, paths: List[str], texts: Mapping[str, str], project) -> None:
        self._paths, self._texts = paths, texts
        shared = project is not None and texts is project.files and paths == list(project.python)
        self._project = project if shared else None
        self._own: Optional[List[Tuple[str, str]]] = None

    def texts(self) -> List[Tuple[str, str]]:
        """(path, text) of each path."""
        if self._project is not None:
            return python_texts(self._project)
        if self._own is None:
            self._own = [(path, self._texts[path]) for path in self._paths]
        return self._own

    def holding(self, word: str) -> Iterator[Tuple[str, str]]:
        """(path, text) of each path whose text holds `word` (scan_view.texts_holding)."""
        if self._project is not None:
            return texts_holding(self._project, word)
        return ((path, text) for path, text in self.texts() if word in text)


# the text of the calls that bind a name other than by calling it: `partial(x.name, ...)`,
# `class C(name): ... super().__init__(x)`, `(A if c else name)(x)` and `(name if c else B)(x)`
_PARTIAL_OF = re.compile(r"partial\s*\(\s*([\w.]+)\s*,")
# literal first (a pattern that starts with \b is tried at every position of the file): the
# word boundary before it is tested on each match
_SUBCLASS_OF = re.compile(r"class\s+\w+\s*\(\s*([\w.]+)\s*[,)]")
_ELSE_CALLED = re.compile(r"else\s+([\w.]+)\s*\)\s*\(\s*[^\s)]")
_IF_CALLED = re.compile(r"\(\s*([\w.]+)\s+if\b[^()]*\)\s*\(\s*[^\s)]")
# both conditional calls hold `)` then `(` (`\)\s*\(`): a file with no such pair (6 in 7 of
# transformers' files) is not searched for them (the `(`-led pattern is tried at every `(`)
_CALLED_GROUP = re.compile(r"\)\s*\(")
# `_IF_CALLED`'s tail, `)` led: what `_if_called` searches for, where `_IF_CALLED` is then tried
_GROUP_CALL = re.compile(r"\)\s*\(\s*[^\s)]")
# `\bsuper\s*\([^)]*\)\s*\.\s*__init__\s*\(\s*[^\s)]`, tried only where `super` starts a word
_SUPER_INIT = re.compile(r"super\s*\([^)]*\)\s*\.\s*__init__\s*\(\s*[^\s)]")


def indirect_binders(text: str, may_partial: bool = True, may_super: bool = True, may_group: bool = True
                     ) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The last names of what a file's text binds indirectly: (those a `partial(x.name, ...)`
    binds; those bound through a subclass's `super().__init__(x)` or a conditional class call).
    One pass over the file for every name asked about, not a search per name. `may_partial`,
    `may_super`, `may_group` False: the caller knows the text calls no word ending in `partial`
    / no `super` / holds no `\\)\\s*\\(` (CallWords._indirect_callers), so it is not searched for
    them."""
    def last(matches, bounded=False):
        return {m.group(1).rsplit(".", 1)[-1] for m in matches
                if not bounded or not m.start() or not _WORD_CHAR.match(text, m.start() - 1)}

    # (led by its literal: skipped to, faster than `in`)
    partial = last(_PARTIAL_OF.finditer(text)) if may_partial else set()
    other: Set[str] = set()
    if may_super and "super" in text and "class" in text and _calls_super_init(text):
        other |= last(_SUBCLASS_OF.finditer(text), bounded=True)
    if may_group:
        other |= conditionally_called(text)
    return frozenset(partial), frozenset(other)


def conditionally_called(text: str) -> FrozenSet[str]:
    """The last names a conditional class call binds: `(A if c else name)(x)`, `(name if c else B)(x)`."""
    if "else" not in text or not _CALLED_GROUP.search(text):
        return frozenset()
    found = {m.group(1).rsplit(".", 1)[-1] for m in _ELSE_CALLED.finditer(text)
             if not m.start() or not _WORD_CHAR.match(text, m.start() - 1)}
    return frozenset(found | {name.rsplit(".", 1)[-1] for name in _if_called(text)})


def _if_called(text: str) -> List[str]:
    """`[m.group(1) for m in _IF_CALLED.finditer(text)]`, the pattern tried only at the `(`
    before each `)\\s*\\(\\s*[^\\s)]` (led by `(`, it was tried at every `(` of the text: 3x the
    CPU on the mixed monorepo tree's texts). No match is lost: a match's `[^()]*` holds no
    parenthesis, so its `(` is the last one before its first `)`, where its tail `_GROUP_CALL`
    starts; `_GROUP_CALL`'s own matches hide none of its others (the one `)` each holds is the
    first), and the `(` found before each is later than the one before the previous. A `(`
    within the previous match's span is skipped, as finditer skips it."""
    found: List[str] = []
    end = 0  # where the previous match ended
    for group in _GROUP_CALL.finditer(text):
        closed = group.start()
        opened = max(text.rfind("(", end, closed), text.rfind(")", end, closed))
        if opened >= 0 and text[opened] == "(":
            match = _IF_CALLED.match(text, opened)
            if match is not None:
                found.append(match.group(1))
                end = match.end()
    return found


def _calls_super_init(text: str) -> bool:
    start = text.find("super")
    while start != -1:
        if (not start or not _WORD_CHAR.match(text, start - 1)) and _SUPER_INIT.match(text, start):
            return True
        start = text.find("super", start + 1)
    return False


def binds_indirectly(word: str, binders: Tuple[FrozenSet[str], FrozenSet[str]], plain: bool) -> bool:
    """`partial(x.word, ...)`, and for a name that is not a chain method's,
    `class C(word): ... super().__init__(x)` (binds word's `__init__`) or
    `(A if c else word)(x)` (binds either). `binders`: the file's `indirect_binders`."""
    partial, other = binders
    return word in partial or (not plain and word in other)


_AFTER_SUPER = re.compile(r"\s*(?:=[^=]|:)")
_KEYWORDS_BEFORE_SUPER = ("as", "import", "def", "class")


def super_rebound(text: str) -> bool:
    """Does the text bind the name `super` (`super = ...`, `super: T`, `import x as super`,
    `def super(`)? What `\\bsuper\\b\\s*(?:=[^=]|:)|\\b(?:as|import|def|class)\\s+super\\b`
    finds, looked for only where `super` is written."""
    start = text.find("super")
    while start != -1:
        end = start + 5
        if not _WORD_CHAR.match(text, end):
            if (not start or not _WORD_CHAR.match(text, start - 1)) and _AFTER_SUPER.match(text, end):
                return True
            before = start
            while before and text[before - 1].isspace():
                before -= 1
            if before < start:
                for keyword in _KEYWORDS_BEFORE_SUPER:
                    at = before - len(keyword)
                    if at >= 0 and text.startswith(keyword, at) and (not at or not _WORD_CHAR.match(text, at - 1)):
                        return True
        start = text.find("super", start + 1)
    return False
