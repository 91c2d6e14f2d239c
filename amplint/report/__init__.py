"""Output formats. Each module renders a finished run (`RunSummary`) as text."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import List

from amplint.diagnostics import Diagnostic


@dataclass
class RunSummary:
    diagnostics: List[Diagnostic] = field(default_factory=list)  # findings left, sorted
    fixed: Counter = field(default_factory=Counter)  # code -> fixes applied
    errors: List[str] = field(default_factory=list)  # one line each
    unsafe_fixes: bool = False
    fix_mode: bool = False

    def sort(self) -> None:
        self.diagnostics.sort(key=lambda d: (d.filename, d.line, d.column, d.code))
