"""A file's code as text, for the class flow's call-site search (issue 34): what each textual
mention of a name can be, without parsing or summarising the file.

`CodeText` blanks comments and plain strings (docstrings, `>>> model.from_pretrained("x")`
examples) and keeps f-strings, whose expressions are code. It tells, for a name, how the file
binds it: module-level imports (`import torch`, `from .utils import cat`), one module-level
`def name(` or `class name`, or something the text cannot vouch for (an assignment, a
parameter, a loop target, an indented import, a mention inside an f-string...). Every answer
is conservative: a binding it cannot classify makes the name "unknown", and the caller then
summarises the file as before."""

from __future__ import annotations

import keyword
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Dict, List, Optional, Tuple

from amplint.analysis.project.code_blanking import blank_code

_WORD = re.compile(r"\w")
_IMPORT = re.compile(
    r"^([ \t]*)(?:from[ \t]+(\.*[\w.]*)[ \t]+)?import[ \t]+(\([^)]*\)|(?:[^\n;\\]|\\\n)*)", re.M
)
_SUPER_INIT_CALL = re.compile(r"super\s*\([^)]*\)\s*\.\s*__init__")
# compiled once: asked per import alias and per mention (re's cache lookup cost more than the match)
_ALIAS = re.compile(r"[^,]+")
_DOTTED = re.compile(r"[\w.]+")
_DEF_BEFORE = re.compile(r"(?:async[ \t]+)?def[ \t]+")
_CLASS_BEFORE = re.compile(r"class[ \t]+")
_NESTED_BEFORE = re.compile(r"\b(?:def|class)[ \t]+$")
_TOP_LINE = re.compile(r"^\S", re.M)  # where a module-level statement (or a continuation) starts
_CLASS_HEAD = re.compile(r"class[ \t]+(\w+)[ \t]*[(:]")
_INDENT = re.compile(r"^([ \t]*)\S", re.M)
# in a class body: a nested class (its methods' `self` is its own instance) or a lambda of `self`
_OTHER_SELF = re.compile(r"^[ \t]+class[ \t]|\blambda[ \t]+self\b", re.M)
_SELF_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([ \t]*self\b", re.M)
# a triple-quoted f-string keeps its text in the code: a line of it may start at column 0
# (`_triple_f`: found from the quotes, which the engine skips to)
_TRIPLE_QUOTE = re.compile("\"\"\"|\'\'\'")
_PROPERTY_DECORATOR = re.compile(r"@[ \t]*(?:[\w.]*\.)?(?:property|cached_property)\b")


@dataclass
class Binding:
    """How a file binds one name: the targets of its imports (with whether each is an
    unconditional module-level statement), its module-level defs and classes, and whether
    any other mention could bind it."""

    imports: List[Tuple[str, bool]] = field(default_factory=list)
    defs: int = 0
    classes: int = 0
    unknown: bool = False


class CodeText:
    def __init__(self, text: str) -> None:
        self.code, self.sure = blank_code(text)
        self.star = False
        # (start, end) of each import statement, and name -> [(target, column 0)]
        self._spans: List[Tuple[int, int]] = []
        self._bound_at: Dict[int, str] = {}  # position of a bound name in an import -> target
        self._imports: Dict[str, List[Tuple[str, bool]]] = {}
        self._span_index: Optional[Tuple[List[int], List[int]]] = None  # made on the first ask
        if self.sure:
            self._read_imports()
        self._bindings: Dict[str, Binding] = {}
        self._tops: Optional[List[int]] = None  # starts of the lines at column 0 (made on the first ask)

    # -- imports ----------------------------------------------------------------------------
    def _read_imports(self) -> None:
        code = self.code
        seen = set()
        found = code.find("import")
        while found >= 0:  # the statements' lines, found by their word (at memchr speed)
            line = code.rfind("\n", 0, found) + 1
            found = code.find("import", found + 6)
            if line in seen:
                continue
            seen.add(line)
            match = _IMPORT.match(code, line)
            if match is None:
                continue
            indent, module, names = match.group(1), match.group(2), match.group(3)
            self._spans.append((match.start(), match.end()))
            column0 = not indent
            base = match.start(3)
            body = names[1:-1] if names.startswith("(") else names
            offset = base + (1 if names.startswith("(") else 0)
            for part in _ALIAS.finditer(body):
                alias = part.group(0)
                if "*" in alias:
                    self.star = True
                    continue
                words = list(_DOTTED.finditer(alias))
                if not words:
                    continue
                if len(words) == 3 and words[1].group(0) == "as":
                    bound, position, full = words[2].group(0), words[2].start(), words[0].group(0)
                elif len(words) == 1:
                    full = words[0].group(0)
                    bound, position = full.split(".")[0], words[0].start()
                else:
                    self.sure = False  # not an alias this reader knows
                    return
                if module is None:
                    target = full if len(words) == 3 else bound
                else:
                    if "." in full or len(words) not in (1, 3):
                        self.sure = False
                        return
                    dots = len(module) - len(module.lstrip("."))
                    rest = module[dots:]
                    target = "." * dots + (rest + "." if rest else "") + full
                if not bound.isidentifier():
                    self.sure = False
                    return
                self._bound_at[offset + part.start() + position] = bound
                self._imports.setdefault(bound, []).append((target, column0))

    def _in_import(self, position: int) -> bool:
        """Whether an import statement's span holds `position`: among the spans starting at or
        before it, the farthest end passes it (a bisection: asked once per mention)."""
        if self._span_index is None:
            spans = sorted(self._spans)
            self._span_index = ([start for start, _ in spans], list(accumulate((end for _, end in spans), max)))
        starts, reach = self._span_index
        index = bisect_right(starts, position)
        return index > 0 and reach[index - 1] > position

    # -- names --------------------------------------------------------------------------------
    def imported(self, name: str) -> bool:
        """Whether an import statement of the file binds `name` (cheap: no binding read)."""
        return name in self._imports

    def mentions(self, name: str) -> List[int]:
        """Positions of `name` as a whole word in the code."""
        out = []
        code = self.code
        for match in re.finditer(re.escape(name), code):
            start, end = match.start(), match.end()
            if (start and _WORD.match(code, start - 1)) or _WORD.match(code, end):
                continue
            out.append(start)
        return out

    def binding(self, name: str) -> Binding:
        found = self._bindings.get(name)
        if found is None:
            found = self._bindings[name] = self._binding(name)
        return found

    def _binding(self, name: str) -> Binding:
        out = Binding(list(self._imports.get(name, ())))
        code = self.code
        for start in self.mentions(name):
            if start in self._bound_at:
                continue  # the import's own binding, counted above
            if self._in_import(start):
                continue  # a module path (`from name import x`, `import name.sub as y`)
            if self.after_dot(start):
                continue  # an attribute of something else
            before = code[max(0, code.rfind("\n", 0, start) + 1):start]
            follow = _next_on_line(code, start + len(name))
            if _DEF_BEFORE.fullmatch(before) and follow == "(":
                out.defs += 1
            elif _CLASS_BEFORE.fullmatch(before) and follow in "(:":
                out.classes += 1
            elif _NESTED_BEFORE.search(before):
                out.unknown = True  # a nested def or class binds it in some scope
            elif follow in ".([":
                continue  # a use
            else:
                out.unknown = True
        return out

    def defines(self, position: int) -> bool:
        """Is the mention at `position` the name of a `def` or `class` statement?"""
        code = self.code
        before = code[code.rfind("\n", 0, position) + 1:position]
        return re.search(r"(?:^|[\s:;])(?:def|class)[ \t]+$", before) is not None

    def after_dot(self, position: int) -> bool:
        return _prev_char(self.code, position) == "."

    def chain(self, position: int, name: str) -> Tuple[Optional[List[str]], int]:
        """The dotted name that ends with the mention of `name` at `position` (["torch",
        "cat"]) and where it starts; [] when it hangs off something that is not a name
        (`x[0].cat`, `"".join`, `super().forward`: no dotted callee), None when the text
        cannot tell (`(a).cat`)."""
        code = self.code
        parts = [name]
        index = position
        while True:
            before = _prev_index(code, index)
            if before < 0 or code[before] != ".":
                return parts, index
            word_end = _prev_index(code, before)
            if word_end < 0:
                return None, index
            char = code[word_end]
            if char in "]}\"'":
                return [], index
            if char == ")":  # `super().forward`, `f(x).cat`: a call's attribute, no dotted callee
                return ([] if _call_parens(code, word_end) else None), index
            if not _WORD.match(char):
                return None, index
            word_start = word_end
            while word_start > 0 and _WORD.match(code, word_start - 1):
                word_start -= 1
            word = code[word_start:word_end + 1]
            if not word.isidentifier():
                return [], index
            parts.insert(0, word)
            index = word_start

    def call_args(self, position: int, name: str) -> Optional[str]:
        """The text between the parentheses of the call whose callee ends at `name`, None when
        the mention is not followed by `(` or the closing one is not found."""
        code = self.code
        start = _next_index(code, position + len(name))
        if start >= len(code) or code[start] != "(":
            return None
        depth = 0
        for index in range(start, len(code)):
            char = code[index]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    return code[start + 1:index]
        return None

    def super_init_args(self) -> List[Optional[str]]:
        """The argument text of each `super(...).__init__(...)` call in the code (None where
        the closing parenthesis is not found): what a subclass's constructor passes on."""
        code = self.code
        return [self.call_args(match.end() - len("__init__"), "__init__") for match in _SUPER_INIT_CALL.finditer(code)
                if not match.start() or not _WORD.match(code, match.start() - 1)]

    def in_class_defining(self, position: int, name: str) -> bool:
        """Is the mention at `position` inside the body of a module-level `class K` (the only
        `class K` at column 0 of the file) whose body writes an undecorated-by-property
        `def name` at its own indentation? Then `self.name` there is K's own method (the class
        flow looks `name` up in the caller's module-level class before its bases), whatever K
        derives from. False wherever the text cannot tell (a triple-quoted f-string, a header
        written twice, a def that is not the shallowest line of the body)."""
        code = self.code
        if self._tops is None:
            self._tops = [] if _triple_f(code) else [m.start() for m in _TOP_LINE.finditer(code)]
        tops = self._tops
        index = bisect_right(tops, position) - 1
        if index < 0:
            return False
        start = tops[index]
        head = _CLASS_HEAD.match(code, start)
        body = code.find("\n", start) + 1
        if head is None or body <= 0 or position < body:
            return False  # not in a class, or on its header's line
        cls = head.group(1)
        if len(re.findall(r"^class[ \t]+%s\b" % cls, code, re.M)) != 1:
            return False
        end = tops[index + 1] if index + 1 < len(tops) else len(code)
        indents = [match for match in _INDENT.finditer(code, body, end)]
        if not indents:
            return False
        least = min(len(match.group(1)) for match in indents)
        if _OTHER_SELF.search(code, body, end) or any(
                len(match.group(1)) > least for match in _SELF_DEF.finditer(code, body, end)):
            return False  # a nested class, or a nested def or lambda binding its own `self`
        for match in re.finditer(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+%s[ \t]*\(" % re.escape(name),
                                 code[body:end], re.M):
            if len(match.group(1)) == least and not _property_above(code, body, body + match.start(), least):
                return True
        return False

    def partial_first(self, start: int) -> bool:
        """Is the dotted name starting at `start` the first argument of a `partial(`?"""
        before = self.code[max(0, start - 200):start]
        return re.search(r"partial\s*\(\s*$", before) is not None


def _property_above(code: str, body: int, line: int, indent: int) -> bool:
    """Do the decorator lines of the def at `line` (those at `indent` starting with `@`,
    with any deeper lines between them) name a property?"""
    while line > body:
        start = code.rfind("\n", 0, line - 1) + 1
        text = code[start:line - 1]
        stripped = text.lstrip(" \t")
        if stripped and len(text) - len(stripped) <= indent:
            if len(text) - len(stripped) < indent or not stripped.startswith("@"):
                return False
            if _PROPERTY_DECORATOR.match(stripped):
                return True
        line = start
    return False


def _call_parens(code: str, close: int) -> bool:
    """Are the parentheses closing at `close` a call's (a name, `)` or `]` before them),
    not a grouping's?"""
    depth = 0
    for index in range(close, -1, -1):
        char = code[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            depth -= 1
            if depth == 0:
                before = _prev_index(code, index)
                if before < 0:
                    return False
                if code[before] in ")]":
                    return True
                start = before
                while start > 0 and _WORD.match(code, start - 1):
                    start -= 1
                word = code[start:before + 1]
                return word.isidentifier() and not keyword.iskeyword(word)
    return False


def _prev_index(code: str, index: int) -> int:
    index -= 1
    while index >= 0 and (code[index] in " \t\n\r\f" or (code[index] == "\\" and code[index + 1:index + 2] == "\n")):
        index -= 1
    return index


def _prev_char(code: str, index: int) -> str:
    found = _prev_index(code, index)
    return code[found] if found >= 0 else ""


def _next_index(code: str, index: int) -> int:
    while index < len(code) and (code[index] in " \t\n\r\f" or (code[index] == "\\" and code[index + 1:index + 2] == "\n")):
        index += 1
    return index


def _next_on_line(code: str, index: int) -> str:
    """The next character that is not a space or a tab ("\n" at the end of the line)."""
    while index < len(code) and code[index] in " \t":
        index += 1
    return code[index] if index < len(code) else "\n"


def _triple_f(code: str) -> bool:
    """`re.search(r"(?<![\\w])(?:[fF][rR]?|[rR][fF])(?:\"\"\"|\'\'\')", code)`: a triple quote whose prefix
    (`f`, `fr`, `rf` in any case) no word character precedes. Read from each run of quotes'
    first triple (the pattern led by its lookbehind is tried at every position): only the first
    triple of a run can follow a letter."""
    for match in _TRIPLE_QUOTE.finditer(code):
        at = match.start()
        if at >= 1 and code[at - 1] in "fF" and (at < 2 or not _WORD.match(code, at - 2)):
            return True
        if at >= 2 and code[at - 2:at].lower() in ("fr", "rf") and (at < 3 or not _WORD.match(code, at - 3)):
            return True
    return False
