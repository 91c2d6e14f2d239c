"""What rules report: diagnostics, fixes and their safety."""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, List, Mapping, Optional, Tuple, Union

if TYPE_CHECKING:  # a warm run reports cached findings without importing LibCST
    import libcst as cst


class Severity(str, enum.Enum):
    ERROR = "error"  # the program raises
    WARNING = "warning"  # silently wrong numbers or a likely bug
    INFO = "info"  # deprecation, performance


class Applicability(str, enum.Enum):
    SAFE = "safe"  # keeps meaning; applied by --fix
    UNSAFE = "unsafe"  # may change behaviour; only with --unsafe-fixes


Replacement = Union["cst.CSTNode", "cst.FlattenSentinel", "cst.RemovalSentinel"]


@dataclass(eq=False)
class Fix:
    """A set of node replacements applied together, plus names the result needs imported.

    `edits` maps an *original* node of the parsed module (by identity) to its replacement.
    `imports` lists modules (only "torch" today) the replacement code refers to by their
    bare name; the engine adds `import torch` when the file does not bind it.
    """

    applicability: Applicability
    message: str
    edits: Mapping[cst.CSTNode, Replacement]
    imports: Tuple[str, ...] = ()


@dataclass(eq=False)
class Diagnostic:
    code: str
    message: str
    severity: Severity
    node: Optional[cst.CSTNode]  # None once stripped (sent between processes, or cached)
    fix: Optional[Fix] = None
    # Nodes whose line numbers the message cites: "{region_line}" in the message is filled in
    # with the line of related["region_line"] once positions are known.
    related: Mapping[str, cst.CSTNode] = field(default_factory=dict)
    # The event a finding at a call reaches through that call (the clip a helper runs): a node of
    # this file, which the engine turns into (path, line), or (path, line) of another file's event
    through: Union[None, cst.CSTNode, Tuple[str, int]] = None
    # Filled in by the engine:
    filename: str = ""
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def strip(self) -> None:
        """Drop tree nodes in place (extra attributes the runner set are kept)."""
        self.node = None
        self.related = {}
        if _is_node(self.through):
            self.through = None
        if self.fix is not None:
            self.fix = Fix(self.fix.applicability, self.fix.message, {})

    def stripped(self) -> "Diagnostic":
        """This finding without tree nodes: cheap to pickle, to cache and to report."""
        fix = None if self.fix is None else Fix(self.fix.applicability, self.fix.message, {})
        through = None if _is_node(self.through) else self.through
        return Diagnostic(
            self.code, self.message, self.severity, None, fix, {}, through, self.filename,
            self.line, self.column, self.end_line, self.end_column,
        )

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "severity": self.severity.value,
            "filename": self.filename,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "fix": None
            if self.fix is None
            else {"applicability": self.fix.applicability.value, "message": self.fix.message},
        }


def _is_node(through) -> bool:
    """Is a finding's `through` a tree node (not None, not another file's (path, line))?"""
    return through is not None and not isinstance(through, tuple)


def drop_chain_duplicates(found: List[Diagnostic], suppressed=()) -> List[Diagnostic]:
    """`found` less the findings at a call whose event, reached through that call, is reported
    there itself under the same code (the helper's clip before unscale, reported at the clip and
    again at the caller's call of the helper): one report per hazard, at the event, as a region
    reached through a call is reported at the event inside the callee. `suppressed`: (code,
    path, line) of findings a `# noqa` silenced, which count as reported: a `# noqa` at the
    event silences the hazard, not only its report there."""
    if not any(d.through is not None for d in found):
        return found
    at = {(d.code, _place(d.filename), d.line) for d in found}
    at.update((code, _place(path), line) for code, path, line in suppressed)
    return [d for d in found if not (isinstance(d.through, tuple)
                                     and (d.code, _place(d.through[0]), d.through[1]) in at)]


def _place(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))
