"""What a file's analysis is asked for and what it gives: the Settings of a run and each file's
FileResult. Kept apart from the engine, which parses and runs the rules, so that the layers that
only carry results (the cache, the reports, a warm run that lints nothing) do not import LibCST
or the rules."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, FrozenSet, Iterable, List, Optional, Set, Tuple

from amplint.analysis.data.torch_versions import TorchTarget
from amplint.analysis.diagnostics import Applicability, Diagnostic, Fix, drop_chain_duplicates

if TYPE_CHECKING:
    from amplint.analysis.rules import Rule


@dataclass(frozen=True)
class Settings:
    select: FrozenSet[str]
    unsafe_fixes: bool = False
    torch: TorchTarget = TorchTarget()  # the oldest torch the project supports (fixes check it)

    @classmethod
    def default(cls) -> "Settings":
        from amplint.analysis.rules import all_rules

        return cls(frozenset(code for code, rule in all_rules().items() if rule.default))

    def rules(self) -> List["Rule"]:
        from amplint.analysis.rules import all_rules

        return [rule for code, rule in all_rules().items() if code in self.select]

    def allows(self, fix: Fix) -> bool:
        return fix.applicability is Applicability.SAFE or self.unsafe_fixes


@dataclass
class FileResult:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    fixed_source: Optional[str] = None  # set when fixes changed the text
    fixes_applied: Counter = field(default_factory=Counter)  # code -> count
    # with fix: each fix applied, (code, line in the text it was applied to, fix message)
    applied: List[Tuple[str, int, str]] = field(default_factory=list)
    found_before: Optional[int] = None  # with fix: the findings before any fix
    errors: List[str] = field(default_factory=list)  # one line each, path included
    internal_error: bool = False
    traceback: Optional[str] = None  # of an internal error, shown with --verbose
    summary: object = None  # the project pass's summary of this file, when asked for
    # its GradScaler protocol summary, made from the same parse when asked for with `summary`
    # (amplint.run.scaler_inputs): a ScalerSummary, False (not a caller) or None (not made)
    scaler: object = None
    # what the project pass reads of the region walks its rules made (project/first_pass_walks.py):
    # (text digest, answers) or None; not cached, not part of the summary
    walks: object = None
    warnings: List[str] = field(default_factory=list)  # one line each, path included
    # (code, line) of the findings a `# noqa` suppressed: a finding at a call whose event one of
    # them is (`through`) is a duplicate of a hazard the user has seen (drop_chain_duplicates)
    suppressed: List[Tuple[str, int]] = field(default_factory=list)


INTERNAL_ERROR_HINT = "this is a bug in amplint: please report it (--verbose shows the traceback)"


def internal_error_result(path: str, exc: BaseException, trace: Optional[str]) -> "FileResult":
    """The one result an unexpected exception in a file's analysis becomes: the run goes on."""
    result = FileResult(path)
    result.errors.append(f"{path}: internal error: {type(exc).__name__}: {exc}; {INTERNAL_ERROR_HINT}")
    result.internal_error = True
    result.traceback = trace
    return result


def chain_duplicates(results: Iterable[Optional[FileResult]]) -> Set[int]:
    """ids of the findings of `results` (None: none) at a call whose event one of them reports,
    or a `# noqa` there silences, under the same code: what `drop_chain_duplicates` drops when
    the files are reported together (the run, the editor, `lint_project`)."""
    results = [result for result in results if result is not None]
    found = [diag for result in results for diag in result.diagnostics]
    silenced = [(code, result.path, line) for result in results for code, line in result.suppressed]
    kept = {id(diag) for diag in drop_chain_duplicates(found, silenced)}
    return {id(diag) for diag in found if id(diag) not in kept}
