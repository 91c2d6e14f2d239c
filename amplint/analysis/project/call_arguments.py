"""What the text of a call's arguments can bind, read without parsing (the class flow's call-site
search, site_files.py): the slots flowfacts may record a value for (`filled_slots`), and whether
any argument may give it a value at all (`may_bind`)."""

from __future__ import annotations

import re
from typing import List, Optional

_IDENT = re.compile(r"[A-Za-z_]\w*")
_KEYWORDS = frozenset({"True", "False", "None"})


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
