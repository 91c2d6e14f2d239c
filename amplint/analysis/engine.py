"""The per-file pipeline: prefilter, parse once, facts once, rules, suppressions, fix loop."""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from amplint.analysis import large_files
from amplint.analysis.context import FileContext
from amplint.analysis.data.torch_versions import TorchTarget
from amplint.analysis.diagnostics import Diagnostic, Fix, drop_chain_duplicates
from amplint.analysis.results import (  # noqa: F401 (public API, defined apart: results.py)
    INTERNAL_ERROR_HINT, FileResult, Settings, chain_duplicates, internal_error_result,
)
from amplint.analysis.facts import EntryRegion, FileFacts
from amplint.analysis.fix_text import apply_fixes, mixed_newlines, restore_newlines
from amplint.analysis.newer_syntax import may_be_newer, newer_syntax_line
from amplint.analysis.parsing import parse, parse_validated, syntax_error, valid_python
from amplint.analysis.positions import Positions, node_positions as fast_positions, positions_of
from amplint.analysis.prefilter import VALUE_KINDS, could_match  # noqa: F401 (public API)
from amplint.analysis.rules import Rule
from amplint.analysis.suppressions import is_suppressed

MAX_FIX_ROUNDS = 8

# (path, source, module, facts) -> the project pass's summary of the file
Summarizer = Callable[[str, str, cst.Module, FileFacts], object]


class FixFailure(Exception):
    pass


def analyze(
    path: str, source: str, module: cst.Module, rules: Sequence[Rule],
    entries: Tuple[EntryRegion, ...] = (), facts: Optional[FileFacts] = None,
    torch: TorchTarget = TorchTarget(), line_map: Optional[Sequence[int]] = None,
    outline: Optional[tuple] = None, suppressed: Optional[List[Tuple[str, int]]] = None,
) -> List[Diagnostic]:
    """Run `rules` on a parsed module; diagnostics come back positioned, suppressions applied
    (each suppressed finding's (code, line) appended to `suppressed` when given).
    `entries`: regions the project pass found around this file's functions. `line_map`: the
    file's line of each line of `source` (a part of a large file), else lines are its own;
    `outline`: its statements' outlines, when known (amplint.analysis.positions.positions_of)."""
    facts = facts if facts is not None else FileFacts(module, entries)
    ctx = FileContext(path, source, module, facts, torch)
    found: List[Diagnostic] = []
    for rule in rules:
        try:
            found.extend(rule.check(ctx))
        except Exception as exc:  # a rule bug must not lose the other rules' results
            raise RuleCrash(rule.code, exc) from exc
    if not found:
        return found
    positions = _positions_of(module, source, found, outline)
    lines = source.splitlines()
    kept: List[Diagnostic] = []
    silenced: List[Tuple[str, int]] = []
    seen: Set[Tuple[str, int, int]] = set()
    to_line = (lambda n: n) if line_map is None else (lambda n: line_map[n - 1])
    for diag in found:
        span = positions[diag.node]
        diag.filename = path
        own_line = span.start.line
        diag.line, diag.column = to_line(own_line), span.start.column + 1
        diag.end_line, diag.end_column = to_line(span.end.line), span.end.column + 1
        if diag.related:
            diag.message = diag.message.format(
                **{key: to_line(positions[node].start.line) for key, node in diag.related.items()}
            )
        if isinstance(diag.through, cst.CSTNode):
            diag.through = (path, to_line(positions[diag.through].start.line))
        line_text = lines[own_line - 1] if own_line <= len(lines) else ""
        if is_suppressed(diag.code, line_text):
            silenced.append((diag.code, diag.line))
            continue
        key = (diag.code, diag.line, diag.column)
        if key in seen:
            continue
        seen.add(key)
        kept.append(diag)
    kept = drop_chain_duplicates(kept, [(code, path, line) for code, line in silenced])
    if suppressed is not None:
        suppressed.extend(silenced)
    kept.sort(key=lambda d: (d.line, d.column, d.code))
    _fix_spans(kept, positions)
    return kept


def node_positions(module: cst.Module):
    """Node -> CodeRange, as LibCST's PositionProvider gives them (amplint.analysis.positions:
    the same code generation at about half the cost; issue 34)."""
    try:
        return fast_positions(module)
    except AttributeError:  # another LibCST layout: its public way
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def _positions_of(module: cst.Module, source: str, found: List[Diagnostic], outline=None):
    """The positions the findings need (their nodes, related nodes and fix edits): only the
    top-level statements holding them are generated (issue 34)."""
    wanted: List[cst.CSTNode] = []
    fixes = set()  # one Fix may serve every finding (AMP130: every reference): its edits once
    for diag in found:
        wanted.append(diag.node)
        if isinstance(diag.through, cst.CSTNode):
            wanted.append(diag.through)
        if diag.related:
            wanted.extend(diag.related.values())
        if diag.fix is not None and id(diag.fix) not in fixes:
            fixes.add(id(diag.fix))
            wanted.extend(diag.fix.edits)
    try:
        return positions_of(module, source, wanted, outline)
    except AttributeError:  # another LibCST layout: its public way
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


class RuleCrash(Exception):
    def __init__(self, code: str, exc: BaseException) -> None:
        super().__init__(f"internal error in {code}: {type(exc).__name__}: {exc}")
        self.code = code


def _fix_spans(diags: List[Diagnostic], positions) -> None:
    done: Dict[int, tuple] = {}  # one Fix can serve many findings (AMP130: every reference)
    for diag in diags:
        if diag.fix is None:
            continue
        span = done.get(id(diag.fix))
        if span is None:
            span = done[id(diag.fix)] = _fix_span(diag.fix, positions)
        diag.fix_span = span  # type: ignore[attr-defined]


def _fix_span(fix: Fix, positions) -> tuple:
    starts, ends = [], []
    if isinstance(positions, Positions):
        for node in fix.edits:
            line, column, end_line, end_column = positions.span(node)
            starts.append((line, column))
            ends.append((end_line, end_column))
    else:
        for node in fix.edits:
            span = positions[node]
            starts.append((span.start.line, span.start.column))
            ends.append((span.end.line, span.end.column))
    return (min(starts), max(ends))


def choose_fixes(diags: Iterable[Diagnostic], settings: Settings, skip: Set[Tuple[str, str]]):
    """Fixes to apply together this round: allowed by the settings, not known to fail, and not
    overlapping one another (the rest wait for the next round)."""
    chosen: List[Diagnostic] = []
    taken: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    for diag in diags:
        fix = diag.fix
        if fix is None or not settings.allows(fix):
            continue
        if (diag.code, diag.fix_key) in skip:  # type: ignore[attr-defined]
            continue
        start, end = diag.fix_span  # type: ignore[attr-defined]
        if any(start < t_end and t_start < end for t_start, t_end in taken):
            continue
        taken.append((start, end))
        chosen.append(diag)
    return chosen


def lint_source(
    path: str, source: str, settings: Settings, fix: bool = False,
    entries: Tuple[EntryRegion, ...] = (), summarize: Optional[Summarizer] = None,
    line_map: Optional[Sequence[int]] = None, outline: Optional[tuple] = None,
) -> FileResult:
    """Lint one file's text; with `fix`, apply fixes to a fixpoint and report what is left.
    `entries` (from the project pass) are regions other files put around this file's
    functions; with them the prefilter asks what each rule needs of the text when the region
    comes from elsewhere (amplint.analysis.data.triggers.ENTRY_NEEDS).
    `summarize(path, source, module, facts)`: called with this file's one parse; its return
    value becomes `result.summary` (the project pass's summary, made in the same worker).
    A file over `large_files.PARTS_ABOVE` characters is linted in parts (report only, with a
    warning); `line_map` is set for such a part (amplint.analysis.large_files), and `outline`
    when its statements were outlined from the file's parse (amplint.analysis.positions)."""
    if mixed_newlines(source):
        # LibCST cannot read a file mixing CRLF and LF (Python can): lint it with one kind
        # of ending, then give every unchanged line its own ending back.
        result = lint_source(
            path, source.replace("\r\n", "\n"), settings, fix, entries, summarize
        )
        if result.fixed_source is not None:
            result.fixed_source = restore_newlines(source, result.fixed_source)
        return result
    result = FileResult(path)
    rules = settings.rules()
    lint = could_match(source, rules, entries)
    if not lint and len(source) > large_files.PARTS_ABOVE and any(
            type(e).__name__ not in VALUE_KINDS for e in entries):
        lint = True  # linted in parts, with the warning that says so, as before
    if not lint and not summarize:
        # Not worth a LibCST parse, but a broken file must not pass as clean: Python's own
        # parser checks it for a tenth of the cost.
        error = syntax_error(source)
        if error is not None:
            result.errors.append(f"{path}:{_newer_syntax(error, source) or error}")
        return result
    parts = None if line_map is not None else large_files.split(source)
    if parts is not None:
        if summarize is not None:
            result.summary = None  # the project pass does not read it (said in the warning)
        if lint:
            def lint_part(text: str, lines: Sequence[int], outlined) -> FileResult:
                return lint_source(
                    path, text, settings, False, entries, line_map=lines, outline=outlined
                )

            large_files.lint_in_parts(path, parts, lint_part, fix, summarize, result)
        elif summarize is not None:
            result.warnings.append(large_files.warning_line(path, len(parts), False, True))
        return result
    try:
        module = parse(source)
    except cst.ParserSyntaxError as exc:
        error = syntax_error(source)
        if error is None:  # valid Python that this LibCST version cannot read
            error = f"{exc.raw_line}:{exc.raw_column + 1}: cannot parse with LibCST: {exc.message}"
        result.errors.append(f"{path}:{error}")
        return result
    except (RecursionError, MemoryError) as exc:
        result.errors.append(f"{path}: cannot parse: {type(exc).__name__}")
        return result
    except Exception as exc:  # LibCST raises a few other errors on odd input
        result.errors.append(f"{path}: cannot parse: {type(exc).__name__}: {exc}")
        return result
    if may_be_newer(source):  # LibCST reads it; Python's parser (the project pass's) may not
        error = syntax_error(source)
        newer = newer_syntax_line(error, module) if error is not None else None
        if newer is not None:
            result.errors.append(f"{path}:{newer}")
    facts = FileFacts(module, entries)
    if summarize is not None:
        result.summary = summarize(path, source, module, facts)
    if not lint:
        return result
    try:
        diags = analyze(
            path, source, module, rules, entries, facts, settings.torch, line_map, outline,
            result.suppressed,
        )
        if fix:
            result.found_before = len(diags)
            current, module, diags = _fix_loop(
                path, source, module, diags, settings, result, entries
            )
            if current != source:
                result.fixed_source = current
    except RuleCrash as exc:
        unreadable = _invalid_tree(source)  # a rule that visits a tree LibCST rejects
        if unreadable is not None:
            result.errors.append(f"{path}: cannot parse: {unreadable}")
            return result
        result.errors.append(f"{path}: {exc}")
        result.internal_error = True
        return result
    except RecursionError:
        result.errors.append(f"{path}: too deeply nested to analyse; skipped")
        return result
    except Exception:
        unreadable = _invalid_tree(source)
        if unreadable is None:
            raise  # a bug of amplint's: the caller reports it as one
        result.errors.append(f"{path}: cannot parse: {unreadable}")
        return result
    result.diagnostics = diags
    if line_map is not None:
        facts.release()  # a part of a large file: its tree is freed with its last finding's node
    return result


def _invalid_tree(source: str) -> Optional[str]:
    """Why LibCST, validating its nodes, cannot read this text (None: it can). The parse skips
    that validation; a tree that fails it only later is reported as the parse error it is."""
    try:
        parse_validated(source)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _fix_loop(path, source, module, diags, settings, result, entries):
    skip: Set[Tuple[str, str]] = set()
    current = source
    for _ in range(MAX_FIX_ROUNDS):
        for diag in diags:
            diag.fix_key = f"{diag.line}:{diag.column}"  # type: ignore[attr-defined]
        chosen = choose_fixes(diags, settings, skip)
        if not chosen:
            break
        new_source = apply_fixes(module, [d.fix for d in chosen])
        if not valid_python(new_source):
            # Find the culprits one by one; keep the rest for the next round.
            bad = [d for d in chosen if not valid_python(apply_fixes(module, [d.fix]))]
            if not bad:
                bad = chosen
            for diag in bad:
                skip.add((diag.code, diag.fix_key))
                result.errors.append(
                    f"{path}:{diag.line}:{diag.column}: {diag.code} fix skipped: "
                    "it would produce invalid Python (please report this)"
                )
            continue
        if new_source == current:
            break
        for diag in chosen:
            result.fixes_applied[diag.code] += 1
            result.applied.append((diag.code, diag.line, diag.fix.message))
        current = new_source
        module = parse(current)
        diags = analyze(path, current, module, settings.rules(), entries, torch=settings.torch)
    return current, module, diags


def _newer_syntax(error: str, source: str) -> Optional[str]:
    """The newer-Python line for a file Python's parser rejected, when LibCST reads it."""
    if not may_be_newer(source):
        return None
    try:
        module = parse(source)
    except Exception:  # noqa: BLE001  (a real syntax error: Python's message stands)
        return None
    return newer_syntax_line(error, module)
