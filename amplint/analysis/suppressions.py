"""`# noqa`, `# noqa: AMP101, AMP104` and `# amplint: ignore[AMP101]` on the reported line."""

from __future__ import annotations

import re
from typing import FrozenSet, Optional

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*amplint:\s*ignore\[(?P<codes>[^\]]*)\]", re.I)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.I)

ALL: FrozenSet[str] = frozenset({"*"})


def suppressed_codes(line: str) -> Optional[FrozenSet[str]]:
    """Codes a source line suppresses; ALL for a bare `# noqa`; None when it has no marker."""
    if "#" not in line:
        return None
    codes = set()
    found = False
    for match in _NOQA.finditer(line):
        found = True
        if match.group("codes") is None:
            return ALL
        codes.update(c.upper() for c in _CODE.findall(match.group("codes")))
    for match in _IGNORE.finditer(line):
        found = True
        codes.update(c.upper() for c in _CODE.findall(match.group("codes")))
    return frozenset(codes) if found else None


def is_suppressed(code: str, line: str) -> bool:
    codes = suppressed_codes(line)
    return codes is not None and (codes is ALL or code in codes)
