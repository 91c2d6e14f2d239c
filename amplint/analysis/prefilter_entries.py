"""The prefilter of a file the project pass gave entries (issue 34): can a rule fire in it, given
its code and regions or half classes that come from other files? Read with Python's `ast` (a
tenth of LibCST's cost) against amplint.analysis.data.triggers.ENTRY_NEEDS.

A file kept out gives no finding (tests/test_prefilter.py runs every test project both ways)."""

from __future__ import annotations

import functools
import re
from typing import FrozenSet, Optional, Sequence, Tuple

from amplint.analysis.data.triggers import (
    CONSTANT_FILL, CONSTANT_STORE, ENTRY_BLIND, FILL_NAMES, HALF_BLIND, HALF_KINDS, HALF_OR_BLIND, ENTRY_KINDS,
    ENTRY_NEEDS, ENTRY_NEEDS_BESIDE, HALF_CONVERTER_NAME, REACHED, REGION_TEXT, REGION_WORDS, TINY_FLOAT,
    FACTORY_NAMES,
)
from amplint.analysis.prefilter_names import TINY_BELOW, CodeNames  # noqa: F401 (tests read TINY_BELOW here)

# entries that are AMP101's evidence only (facts/half_evidence.py): a parameter a region of
# another file binds to a half value, a call the project resolves to a module's forward
_AMP101_EVIDENCE = ("EntryRegionArg", "EntryForwardCall")


def _makes_factory(source: str) -> bool:
    code = CodeNames.of(source)
    return code is None or bool(code.names.intersection(FACTORY_NAMES))


def could_match_with(source: str, rules: Sequence, entries: Sequence[object], without) -> bool:
    """Can any of `rules` fire in `source` with these entries? `without(source, rules)`: the
    prefilter of a file without entries (for the rules such entries do not change)."""
    if any(type(entry).__name__ in _AMP101_EVIDENCE for entry in entries):
        # evidence for AMP101's writes into a factory's buffer only (half_evidence.py), read
        # where the file makes one
        if any(rule.code == "AMP101" for rule in rules) and _makes_factory(source):
            return True
        entries = [entry for entry in entries if type(entry).__name__ not in _AMP101_EVIDENCE]
        if not entries:
            return without(source, rules)
    if any(type(entry).__name__ not in ENTRY_KINDS for entry in entries):
        return True
    codes = {rule.code for rule in rules}
    if any(code not in ENTRY_NEEDS and code not in ENTRY_BLIND for code in codes):
        return True
    blind_codes = set(ENTRY_BLIND)
    if all(type(entry).__name__ in HALF_KINDS for entry in entries):
        blind_codes.update(HALF_BLIND)  # they read no half class: as without entries
    blind = [rule for rule in rules if rule.code in blind_codes]
    if blind and without(source, blind):
        return True
    reading = tuple(sorted(codes & set(ENTRY_NEEDS) - blind_codes))
    if not reading or not _signals(reading)(source):
        return False
    code = CodeNames.of(source)
    if code is None:
        return True  # not valid Python: LibCST's parse reports why, as before
    targets = halves = None
    if all(type(entry).__name__ == "EntryRegion" for entry in entries) and code.without_own_half(source):
        targets = tuple(sorted({entry.target for entry in entries}))  # type: ignore[attr-defined]
    elif all(type(entry).__name__ in HALF_KINDS for entry in entries) and code.without_own_half(source):
        halves = tuple(sorted({entry.target for entry in entries}))  # type: ignore[attr-defined]
    for rule_code in reading:
        scope, needs = ENTRY_NEEDS[rule_code]
        if REGION_TEXT in needs and any(word in source for word in REGION_WORDS):
            return True
        if scope == REACHED and halves is not None:
            if code.half_reached(halves).intersection(needs):  # fp16 code: no region, no BESIDE
                return True
        elif rule_code in HALF_OR_BLIND and halves is not None and not code.defs.keys() & set(halves):
            # its finding is one it makes without entries, or sits in fp16 code
            if without(source, [rule for rule in rules if rule.code == rule_code]) \
                    or code.half_reached(halves).intersection(needs):
                return True
        elif scope == REACHED and targets is not None:
            beside = ENTRY_NEEDS_BESIDE.get(rule_code)
            # the file's names hold every reached function's: a file without them reaches none
            if _meets(code.names, needs, beside) \
                    and any(_meets(names, needs, beside) for names in code.reached(targets)):
                return True
        elif code.names.intersection(needs):
            return True
    return False


def _meets(names: FrozenSet[str], needs: Tuple[str, ...], beside: Optional[Tuple[str, ...]]) -> bool:
    return bool(names.intersection(needs)) and (not beside or bool(names.intersection(beside)))


# text every mark needs (a superset: checked before Python's parser is asked)
_MARK_TEXT = {
    TINY_FLOAT: r"[eE]-|\.[0_]{7}",
    CONSTANT_STORE: r"\]",
    CONSTANT_FILL: "|".join(FILL_NAMES),
    REGION_TEXT: "|".join(REGION_WORDS),
    HALF_CONVERTER_NAME: r"(?i:(to|convert\w*)_(f16|fp16|half|float16|bf16|bfloat16))",
}


@functools.lru_cache(maxsize=16)
def _signals(codes: Tuple[str, ...]):
    """A search for the text any of these rules' requirements needs (a name's, a mark's)."""
    parts = {_MARK_TEXT.get(need) or re.escape(need) for code in codes for need in ENTRY_NEEDS[code][1]}
    return re.compile("|".join(sorted(parts))).search
