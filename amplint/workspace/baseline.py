"""Baselines: adopting amplint on a large codebase without a flag day.

`amplint --write-baseline amplint-baseline.json src/` records every current finding;
`amplint --baseline amplint-baseline.json src/` then reports (and fails on) only findings that
are not in it. A finding is identified by its file (relative to the baseline file's folder), its
code and a hash of the flagged line's text (whitespace-normalised), never its line number, so
edits elsewhere in the file that shift lines do not bring old findings back. Identical lines
with the same code are counted: a second copy of a baselined hazard is new.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from typing import Iterable, List, Tuple

from amplint.analysis.diagnostics import Diagnostic

FORMAT = "amplint-baseline"
VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message names it."""


def line_key(code: str, line_text: str) -> str:
    normalized = " ".join(line_text.split())
    return hashlib.sha256(f"{code}\0{normalized}".encode("utf-8")).hexdigest()[:20]


def assign_fingerprints(diagnostics: List[Diagnostic], lines: List[str]) -> None:
    """Give each finding `line_key` (code + flagged line's text) and `fingerprint` (that plus
    the occurrence number among identical keys in the file: stable and unique per file)."""
    seen: Counter = Counter()
    for diag in diagnostics:
        text = lines[diag.line - 1] if 0 < diag.line <= len(lines) else ""
        key = line_key(diag.code, text)
        diag.line_key = key  # type: ignore[attr-defined]
        diag.fingerprint = f"{key}:{seen[key]}"  # type: ignore[attr-defined]
        seen[key] += 1


def _relative(path: str, base: str) -> str:
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, base)
    return (absolute if relative.startswith(os.pardir) else relative).replace(os.sep, "/")


def _key(diag: Diagnostic, base: str) -> Tuple[str, str, str]:
    return (_relative(diag.filename, base), diag.code, getattr(diag, "line_key", ""))


def write(path: str, diagnostics: Iterable[Diagnostic]) -> int:
    base = os.path.dirname(os.path.abspath(path))
    entries = []
    for diag in diagnostics:
        relative, code, key = _key(diag, base)
        entry = {"path": relative, "code": code, "hash": key, "line": diag.line,
                 "message": diag.message}
        cell = getattr(diag, "cell", None)
        if cell:
            entry["cell"] = cell
        entries.append(entry)
    entries.sort(key=lambda e: (e["path"], e.get("cell", 0), e["line"], e["code"]))
    document = {"format": FORMAT, "version": VERSION, "findings": entries}
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None
    return len(entries)


class Baseline:
    def __init__(self, path: str, counts: Counter) -> None:
        self.path = path
        self.base = os.path.dirname(os.path.abspath(path))
        self.counts = counts

    @classmethod
    def load(cls, path: str) -> "Baseline":
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except OSError as exc:
            raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise BaselineError(f"{path}: not a baseline file (invalid JSON: {exc})") from None
        if (
            not isinstance(document, dict)
            or document.get("format") != FORMAT
            or not isinstance(document.get("findings"), list)
        ):
            raise BaselineError(f"{path}: not an amplint baseline (write one with --write-baseline)")
        if document.get("version") != VERSION:
            raise BaselineError(
                f"{path}: baseline version {document.get('version')!r} is not supported "
                f"(expected {VERSION}); write it again with --write-baseline"
            )
        counts: Counter = Counter()
        for entry in document["findings"]:
            try:
                counts[(entry["path"], entry["code"], entry["hash"])] += 1
            except (KeyError, TypeError):
                raise BaselineError(f"{path}: malformed baseline entry: {entry!r}") from None
        return cls(path, counts)

    def filter(self, diagnostics: Iterable[Diagnostic]) -> Tuple[List[Diagnostic], int]:
        """(findings not in the baseline, number of baselined findings left out)."""
        remaining = Counter(self.counts)
        new: List[Diagnostic] = []
        matched = 0
        for diag in diagnostics:
            key = _key(diag, self.base)
            if remaining[key] > 0:
                remaining[key] -= 1
                matched += 1
            else:
                new.append(diag)
        return new, matched
