"""Which files are worth a LibCST parse: the rules' trigger words in the text, then, for a file
whose only words are half-dtype names (amplint.analysis.data.triggers.HALF_WORDS), Python's own parser
(a tenth of LibCST's cost) to see whether any of them names something in code.

A file the project pass gave entries is tested against what each rule needs in its own code
when the region or half class comes from elsewhere (amplint.analysis.prefilter_entries, issue 34).

A file kept out gives no finding of the rules asked about (tests/test_prefilter.py)."""

from __future__ import annotations

import ast
import bisect
import functools
import re
import warnings
from typing import Callable, List, Optional, Sequence, Tuple

from amplint.analysis.data.triggers import ALSO_NEEDS, HALF_CONVERTER, HALF_NAMES, HALF_WORDS
from amplint.analysis.parsing import python_tree
from amplint.analysis.prefilter_entries import could_match_with
from amplint.analysis.rules import Rule


VALUE_KINDS = ("EntryBoundSpans", "EntryHalfRead")


def _values_asked(entries: Sequence[object], codes) -> bool:
    """Does a value another file's code gives this file's expressions make a rule's finding
    possible without the file's own words (a fill beyond float16 for AMP110, an eps float16
    rounds to zero for AMP140, a `torch.device` for AMP131, a half-cast model for AMP103)?"""
    for entry in entries:
        name = type(entry).__name__
        if name == "EntryHalfRead":
            if "AMP103" in codes:
                return True
            continue
        if name != "EntryBoundSpans":
            continue
        own = "@%s:" % entry.module  # type: ignore[attr-defined]
        for _code, _start, atoms, _other in entry.spans:  # type: ignore[attr-defined]
            for atom in atoms:
                if own in atom or atom.endswith("@" + entry.module):  # type: ignore[attr-defined]
                    continue  # made in this file: its own words decide, as without entries
                if atom.startswith("X:device") and "AMP131" in codes:
                    return True
                if atom.startswith("X:half") and "AMP103" in codes:
                    return True
                if atom.startswith("R:") and atom != "R:~":
                    value = abs(float(atom[2:].split("@", 1)[0]))
                    if ("AMP110" in codes and value > 65504) or ("AMP140" in codes and value < 6e-8):
                        return True
    return False


def could_match(source: str, rules: Sequence[Rule], entries: Sequence[object] = ()) -> bool:
    """Can any of these rules fire in this text at all, with these entries of the project pass?"""
    if entries:
        # the values the project's solve bound (facts/bound_values.py) answer questions the
        # file's own trigger words already ask; a half cast another file's region reads is AMP103's
        kept = [e for e in entries if type(e).__name__ not in VALUE_KINDS]
        if len(kept) < len(entries):
            if _values_asked(entries, {r.code for r in rules}):
                return True
            return could_match(source, rules, kept)
        return could_match_with(source, rules, entries, could_match)
    words, strong = _trigger_tests(tuple(rules))
    if not words(source):
        return False
    return strong(source) or half_names_in_code(source)


@functools.lru_cache(maxsize=64)
def _trigger_tests(rules: Tuple[Rule, ...]) -> Tuple[Callable[[str], bool], Callable[[str], bool]]:
    """(any trigger word, a trigger word other than a half-dtype name)."""
    if any(not rule.triggers for rule in rules):
        always = lambda source: True  # noqa: E731
        return always, always
    return _words_test(rules, ()), _words_test(rules, HALF_WORDS)


def _words_test(rules: Tuple[Rule, ...], left_out: Tuple[str, ...]) -> Callable[[str], bool]:
    """One regex of the trigger words of the rules that need nothing else; the others (see
    amplint.analysis.data.triggers) also need one word of their requirement."""
    words = sorted({t for rule in rules if rule.code not in ALSO_NEEDS for t in rule.triggers
                    if t not in left_out})
    search = re.compile("|".join(re.escape(w) for w in words)).search if words else None
    gated = sorted({
        (tuple(t for t in rule.triggers if t not in left_out), ALSO_NEEDS[rule.code])
        for rule in rules if rule.code in ALSO_NEEDS
    })

    def test(source: str) -> bool:
        if search is not None and search(source) is not None:
            return True
        return any(
            any(word in source for word in needs) and any(word in source for word in own)
            for own, needs in gated
        )

    return test


_CONVERTER = re.compile(HALF_CONVERTER)


# the lines a half name can be on (any case; `fp16` for converters such as `to_fp16`)
_HALF_LINE_WORDS = re.compile(r"float16|half|f16|fp16", re.IGNORECASE)


@functools.lru_cache(maxsize=8)
def half_names_in_code(source: str) -> bool:
    """A half dtype or cast named in code outside comparisons (data/triggers.py); also True
    when Python cannot parse the text (LibCST's parse then reports why)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = python_tree(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    lines = _word_lines(source)
    compared = set()
    stack: List[ast.AST] = [tree]
    while stack:  # depth first, parents before children: a comparison before its operands
        node = stack.pop()
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                compared.add(id(operand))
                if isinstance(operand, (ast.Tuple, ast.List, ast.Set)):
                    compared.update(id(e) for e in operand.elts)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if id(node) not in compared and (name in HALF_NAMES or _CONVERTER.search(name.lower())):
                return True
        elif isinstance(node, ast.alias) and node.name.rpartition(".")[2] in HALF_NAMES:
            return True
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            decorators = getattr(child, "decorator_list", None)
            if decorators:  # a def's line is its `def`: its decorators sit above it
                first = min([first] + [d.lineno for d in decorators])
            if lines is None or first is None or _any_between(lines, first, child.end_lineno or first):
                stack.append(child)
    return False


def _word_lines(source: str) -> Optional[List[int]]:
    """The line numbers (as Python counts them) holding a half word; None: every line counts
    (a text with carriage returns, which Python also reads as line ends)."""
    if "\r" in source:
        return None
    found: List[int] = []
    line, position = 1, 0
    for match in _HALF_LINE_WORDS.finditer(source):
        line += source.count("\n", position, match.start())
        position = match.start()
        if not found or found[-1] != line:
            found.append(line)
    return found


def _any_between(lines: List[int], first: int, last: int) -> bool:
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last
