"""What the runtime monitor reports: a :class:`Finding`, and the warning/error raised for one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict


@dataclass
class Finding:
    """One hazard seen at run time.

    code: the rule code shared with the static linter (``"AMP104"``), or ``"OVERFLOW"`` for the
    overflow locator. filename/line: the first frame outside torch and amplint (the user's line).
    extra: details such as the op name, dtype, and ``count`` (how often the same code was seen at
    the same line).
    """

    code: str
    message: str
    filename: str
    line: int
    extra: Dict[str, Any] = field(default_factory=dict)

    @property
    def location(self) -> str:
        return f"{self.filename}:{self.line}"

    def __str__(self) -> str:
        return f"{self.location}: {self.code} {self.message}"


class AmpHazardWarning(UserWarning):
    """Issued by a monitor in ``mode="warn"``, attributed to the user's file and line."""


class AmpHazardError(RuntimeError):
    """Raised by a monitor in ``mode="raise"`` at the first finding."""

    def __init__(self, finding: Finding):
        super().__init__(str(finding))
        self.finding = finding
