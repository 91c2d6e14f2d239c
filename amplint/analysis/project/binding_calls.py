"""The text test of the class flow's call-site search (flowindex._files_calling): does a file's
text hold a call of a name that flowfacts records as a call site (one with arguments)."""

from __future__ import annotations

import re

from amplint.analysis.project.call_words import indirect_binders, super_rebound


_WORD_CHAR = re.compile(r"\w")
# what a recorded call site of `name` cannot be: a definition, a call of `super()`'s method
# (flowfacts follows no value from `super()`), a call without arguments (it binds nothing)
_NOT_A_SITE = re.compile(r"(?:\bdef\s+|\bsuper\s*\([^()]*\)\s*\.\s*)$")


def binding_call(word: str, text: str, plain: bool = False, partial=None) -> bool:
    """Does `text` hold `word(` with arguments, other than as `def word(` or `super().word(`?
    `partial(word, ...)` (or `partial(x.word, ...)`) binds like a call of `word`. `plain`: only a
    call by the bare name counts (`x.word(...)` is a chain method's call, which binds nothing).
    `partial`: the file's `indirect_binders(text)[0]`, when known. Plain substring search and
    precompiled patterns: a pattern per word, compiled for each of thousands of words, cost more
    than the search itself on a transformers-sized tree."""
    if partial is None:
        partial = indirect_binders(text)[0]
    if word in partial:
        return True
    super_is_builtin = None
    start = text.find(word)
    while start != -1:
        tail = _CALL_TAIL.match(text, start + len(word))
        if tail is None:
            start = text.find(word, start + 1)
            continue
        after = tail.end()  # the next occurrence is looked for after this one, as finditer does
        if (start and (_WORD_CHAR.match(text, start - 1) or (plain and text[start - 1] == "."))) \
                or tail.group(1) is None:  # `word()`: no argument to bind
            start = text.find(word, after)
            continue
        before = _NOT_A_SITE.search(text[max(0, start - 80):start])
        if before is not None:
            if not before.group(0).startswith("def") and super_is_builtin is None:
                super_is_builtin = not super_rebound(text)
            if before.group(0).startswith("def") or super_is_builtin:
                start = text.find(word, after)
                continue
        return True
    return False


_CALL_TAIL = re.compile(r"\s*\(\s*([^\s)])?")
