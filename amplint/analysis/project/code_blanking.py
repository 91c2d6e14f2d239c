"""A file's code with its comments removed and its plain strings emptied (site_text.CodeText's
`code`): what the class flow's call-site search reads, so that a name in a docstring or a
comment (`>>> model.from_pretrained("x")`) is not taken for a mention. f-strings stay: their
expressions are code."""

from __future__ import annotations

import re
from typing import Tuple

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
_PREFIX = frozenset("rRbBuUfFtT")
_WORD = re.compile(r"\w")


def blank_code(text: str) -> Tuple[str, bool]:
    """The text with comments removed and plain strings emptied (newlines kept); f-strings
    stay. False when it cannot be sure where a string ends (an unterminated one, or an
    f-string whose braces do not balance: Python 3.12's nested quotes)."""
    out = []
    position = 0
    end_of_text = len(text)
    find = text.find
    # where a comment or a string may start: the next `#`, `"` and `'` at or after `position`
    # (-1: none left), each found again only once `position` passes it (a `[#"']` search per
    # string or comment, tried at every character, cost 1.5x as much on the framework trees)
    comment, double, single = find("#"), find('"'), find("'")
    while True:
        if 0 <= comment < position:
            comment = find("#", position)
        if 0 <= double < position:
            double = find('"', position)
        if 0 <= single < position:
            single = find("'", position)
        start = comment if comment >= 0 else end_of_text
        if 0 <= double < start:
            start = double
        if 0 <= single < start:
            start = single
        if start == end_of_text:
            out.append(text[position:])
            break
        if start == comment:  # a comment
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
