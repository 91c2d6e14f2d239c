"""Project text that may call a function where the class flow binds no parameter of it (the
rule RULES.md states under "Dtype of values": a fact about what every call passes holds only
when every call is one the flow sees): the function's name written as a value or a string, and
a call passing `*args` / `**kwargs`, past which flowfacts records no argument. Read on the
texts, once per name (and parameter) a pass asks about."""

from __future__ import annotations

import re


def used_as_value(project, name: str) -> bool:
    """Some project text writes `name` other than as a call (`name(`, `.name(`), its `def` or
    an import: a value (`[evaluate]`, `fn=handler.eval_batch`), a string (`getattr(h, "name")`)
    or prose, any of which may call it where the class flow binds nothing. Comments aside;
    read once per name."""
    memo = project.__dict__.setdefault("_unseen_value_uses", {})
    found = memo.get(name)
    if found is None:
        found = False
        word = re.compile(r"\b%s\b" % re.escape(name))
        for path in project.python:
            text = project.files.get(path) or ""
            if name not in text:
                continue
            for line in text.splitlines():
                code = line.split("#", 1)[0]
                if name not in code:
                    continue
                head = code.lstrip()
                if head.startswith(("def ", "from ", "import ")):
                    continue
                if any(not code[match.end():].lstrip().startswith("(") for match in word.finditer(code)):
                    found = True
                    break
            if found:
                break
        memo[name] = found
    return found


_DEF = re.compile(r"\bdef\s+$")


def starred_call(project, name: str, param: str) -> bool:
    """Some project call `name(...)` passes `*args` or `**kwargs` and does not write `param=`:
    the star may bind the parameter, and the flow records no binding past a star (flowfacts
    stops at the first one), so such a site is a call it does not see. Read once per name and
    parameter."""
    memo = project.__dict__.setdefault("_unseen_starred", {})
    if (name, param) not in memo:
        memo[(name, param)] = any(
            _starred_in(text, name, param) for text in (project.files.get(path) or "" for path in project.python)
            if name in text and "*" in text)
    return memo[(name, param)]


def _starred_in(text: str, name: str, param: str) -> bool:
    """A call `name(...)` of the text with a star argument of its own (`(*a`, `, **kw`; not
    `x * y`, not a nested call's) and no keyword `param=` of its own. A parenthesis inside a
    string may misplace the reading: conservative either way only when it finds more stars."""
    keyword = re.compile(r"\s*%s\s*=(?!=)" % re.escape(param))
    for match in re.finditer(r"\b%s\s*\(" % re.escape(name), text):
        if _DEF.search(text, max(0, match.start() - 40), match.start()):
            continue  # `def name(self, model, **kwargs):` is no call
        depth, starred, named = 0, False, False
        for at in range(match.end() - 1, min(len(text), match.end() + 4000)):
            char = text[at]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    break
            if depth == 1 and char in "(,":
                rest = text[at + 1:at + 200]
                starred = starred or rest.lstrip().startswith("*")
                named = named or bool(keyword.match(rest))
        if starred and not named:
            return True
    return False
