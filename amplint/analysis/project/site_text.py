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

# a string's body after its opening quotes, closing quotes included. A body is read as a run of
# tokens (an escape `\\x`, a quote that does not close, any other character) up to the first
# closing quote. Written as an unrolled loop (a run of plain characters is one class repetition,
# not one alternation per character: ~2.8x less CPU per body on the framework trees), each
# pattern matches exactly where `(?:[^"\\]|\\[\s\S]|"(?!""))*"""` and its kin match: the tokens
# are disjoint, so a body has one reading (tests/test_site_files.py compares the two).
_BODY = {
    '"""': re.compile(r'[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'),
    "'''": re.compile(r"[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"),
    '"': re.compile(r'[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"'),
    "'": re.compile(r"[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'"),
}
_START = re.compile(r"[#\"']")  # where a comment or a string may start
_PREFIX = frozenset("rRbBuUfFtT")
_WORD = re.compile(r"\w")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_IMPORT = re.compile(
    r"^([ \t]*)(?:from[ \t]+(\.*[\w.]*)[ \t]+)?import[ \t]+(\([^)]*\)|(?:[^\n;\\]|\\\n)*)", re.M
)
_KEYWORDS = frozenset({"True", "False", "None"})
_SUPER_INIT_CALL = re.compile(r"super\s*\([^)]*\)\s*\.\s*__init__")
# compiled once: asked per import alias and per mention (re's cache lookup cost more than the match)
_ALIAS = re.compile(r"[^,]+")
_DOTTED = re.compile(r"[\w.]+")
_DEF_BEFORE = re.compile(r"(?:async[ \t]+)?def[ \t]+")
_CLASS_BEFORE = re.compile(r"class[ \t]+")
_NESTED_BEFORE = re.compile(r"\b(?:def|class)[ \t]+$")


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
        self.code, self.sure = _blank(text)
        self.star = False
        # (start, end) of each import statement, and name -> [(target, column 0)]
        self._spans: List[Tuple[int, int]] = []
        self._bound_at: Dict[int, str] = {}  # position of a bound name in an import -> target
        self._imports: Dict[str, List[Tuple[str, bool]]] = {}
        self._span_index: Optional[Tuple[List[int], List[int]]] = None  # made on the first ask
        if self.sure:
            self._read_imports()
        self._bindings: Dict[str, Binding] = {}

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

    def partial_first(self, start: int) -> bool:
        """Is the dotted name starting at `start` the first argument of a `partial(`?"""
        before = self.code[max(0, start - 200):start]
        return re.search(r"partial\s*\(\s*$", before) is not None


def _pieces(args: str) -> List[str]:
    depth = 0
    current: List[str] = []
    pieces = []
    for char in args:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
    pieces.append("".join(current))
    return pieces


_ANY_IDENT = re.compile(r"[^\W\d]\w*")  # unicode names too (`_IDENT` is ASCII only)
_QUOTE = re.compile(r"[\"']")
_LAMBDA = re.compile(r"(?<!\w)lambda(?!\w)")
_KEYWORD_ARG = re.compile(r"([^\W\d]\w*)\s*=(?!=)")


def filled_slots(args: str) -> Optional[set]:
    """The slots (positions, keywords) of these call arguments that flowfacts may record:
    every argument before the first starred one (it records none from there), by keyword or
    by its position among all the arguments, except those holding literals only. None when
    the text is not plainly a list of arguments (unbalanced brackets)."""
    found: set = set()
    if _QUOTE.search(args.replace('""', "").replace("''", "")) or _LAMBDA.search(args):
        return None  # commas of an f-string's text (kept by CodeText) or of a lambda's parameters
    pieces = _pieces(args)
    if args.count("(") != args.count(")") or args.count("[") != args.count("]") \
            or args.count("{") != args.count("}"):
        return None
    for position, piece in enumerate(pieces):
        piece = piece.strip()
        if piece.startswith("*"):
            break
        keyword = _KEYWORD_ARG.match(piece)
        value = piece[keyword.end():] if keyword else piece
        if any(word.group(0) not in _KEYWORDS for word in _ANY_IDENT.finditer(value)):
            found.add(keyword.group(1) if keyword else position)
    return found


def may_bind(args: str) -> bool:
    """Can one of these call arguments give flowfacts a value it records (a name, an
    attribute, a call, a subscript)? Literals alone cannot. Conservative: any identifier
    other than True/False/None counts, and a starred argument ends the ones read."""
    for piece in _pieces(args):
        piece = piece.strip()
        if piece.startswith("*"):
            return False
        keyword = re.match(r"[A-Za-z_]\w*\s*=(?!=)", piece)
        if keyword:
            piece = piece[keyword.end():]
        if any(word.group(0) not in _KEYWORDS for word in _IDENT.finditer(piece)):
            return True
    return False


def _blank(text: str) -> Tuple[str, bool]:
    """The text with comments removed and plain strings emptied (newlines kept); f-strings
    stay. False when it cannot be sure where a string ends (an unterminated one, or an
    f-string whose braces do not balance: Python 3.12's nested quotes)."""
    out = []
    position = 0
    search = _START.search
    while True:
        match = search(text, position)
        if match is None:
            out.append(text[position:])
            break
        start = match.start()
        if match.group(0) == "#":  # a comment
            out.append(text[position:start])
            end = text.find("\n", start)
            position = len(text) if end < 0 else end
            continue
        first = start  # the string's prefix letters, when they are not the end of a name
        while first > start - 2 and first > 0 and text[first - 1] in _PREFIX:
            first -= 1
        if first < start and first > 0 and _WORD.match(text, first - 1):
            first = start
        prefix = text[first:start]
        quote = text[start:start + 3]
        if quote not in ('"""', "'''"):
            quote = text[start]
        body = _BODY[quote].match(text, start + len(quote))
        if body is None:
            return text, False
        end = body.end()
        out.append(text[position:first])
        if "f" in prefix.lower() or "t" in prefix.lower():
            if not _balanced(text[start + len(quote):end - len(quote)]):
                return text, False
            out.append(text[first:end])
        else:
            out.append(quote[0] + "\n" * text.count("\n", start, end) + quote[0])
        position = end
    return "".join(out), True


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


def _balanced(body: str) -> bool:
    depth = 0
    body = body.replace("{{", "").replace("}}", "")
    for char in body:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


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
